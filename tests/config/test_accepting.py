"""Web processes sharing one listening socket share a burst of connections, rather than the first awake
taking them all; a process alone at the socket still takes every one, in slices."""

from __future__ import annotations

import contextvars
import os
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from twisted.internet import tcp

from config import accepting
from config.accepting import SHARED_BY_ENV

# A Twisted server on the inherited socket that answers each connection with its process id.
SERVER = """
import os, socket, sys
from twisted.internet import protocol, reactor
from config import accepting

class Pid(protocol.Protocol):
    def connectionMade(self):
        self.transport.write(str(os.getpid()).encode())
        self.transport.loseConnection()

factory = protocol.Factory.forProtocol(Pid)
shared = accepting.install(share=int(sys.argv[2]), pause_s=float(sys.argv[3]))
reactor.adoptStreamPort(int(sys.argv[1]), socket.AF_INET, factory)
reactor.callWhenRunning(print, "shared", shared, flush=True)
reactor.run()
"""
ROOT = Path(__file__).resolve().parents[2]


def _servers(listener: socket.socket, count: int, *, share: int, pause_s: float, shared_by: int):
    servers = [
        subprocess.Popen(
            [sys.executable, "-c", SERVER, str(listener.fileno()), str(share), str(pause_s)],
            pass_fds=(listener.fileno(),),
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, SHARED_BY_ENV: str(shared_by)},
            cwd=ROOT,
        )
        for _ in range(count)
    ]
    said = [server.stdout.readline().strip() for server in servers]  # each says so once it accepts
    return servers, said


def _burst(port: int, connections: int) -> Counter:
    clients = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(connections)]
    answered = Counter()
    for client in clients:
        answered[client.recv(32).decode()] += 1
        client.close()
    return answered


@pytest.fixture
def listener():
    sock = socket.create_server(("127.0.0.1", 0), backlog=256)
    sock.set_inheritable(True)
    sock.setblocking(False)  # as Daphne's "fd" endpoint leaves the run command's socket
    yield sock
    sock.close()


def _served(listener, processes: int, *, connections: int, pause_s: float, shared_by: int):
    """What each of ``processes`` servers said of itself, and how many of a burst of ``connections`` each
    answered (by process id)."""
    servers, said = _servers(listener, processes, share=4, pause_s=pause_s, shared_by=shared_by)
    try:
        return said, _burst(listener.getsockname()[1], connections)
    finally:
        for server in servers:
            server.kill()
            server.wait(timeout=10)


def test_two_processes_at_one_socket_share_a_burst_of_connections(listener):
    said, answered = _served(listener, 2, connections=40, pause_s=0.2, shared_by=2)

    assert said == ["shared True", "shared True"]
    assert sum(answered.values()) == 40
    assert len(answered) == 2 and min(answered.values()) >= 12, answered


def test_a_process_alone_at_the_socket_takes_every_connection(listener):
    said, answered = _served(listener, 1, connections=30, pause_s=0.05, shared_by=2)

    assert said == ["shared True"] and sum(answered.values()) == 30


def test_a_process_that_shares_with_nobody_takes_connections_as_twisted_does(listener):
    said, answered = _served(listener, 1, connections=10, pause_s=0.05, shared_by=1)

    assert said == ["shared False"] and sum(answered.values()) == 10


def test_a_pause_below_zero_is_refused_and_installing_twice_counts_once(monkeypatch):
    monkeypatch.setattr(tcp.Port, "doRead", tcp.Port.doRead)  # put back after the test
    monkeypatch.setenv(SHARED_BY_ENV, "2")

    with pytest.raises(ValueError, match="0 s or more"):
        accepting.install(share=4, pause_s=-1.0)
    assert accepting.install(share=4, pause_s=0.01)
    installed = tcp.Port.doRead
    assert accepting.install(share=4, pause_s=0.01) and tcp.Port.doRead is installed  # not wrapped twice


REQUEST_STATE = contextvars.ContextVar("request_state")


class _Port:
    """What stepping back from a socket and coming back touches of a port."""

    connected, disconnecting = True, False

    def startReading(self) -> None:
        self.registered_in = contextvars.copy_context()


def test_the_socket_comes_back_in_a_context_of_its_own_not_the_one_that_set_the_timer():
    port = _Port()

    def timer_fires() -> None:  # Twisted runs timed calls in the context of whoever last set its timer
        REQUEST_STATE.set("an HTTP request's thread-sensitive executor, since closed")
        accepting._resume(port)

    contextvars.copy_context().run(timer_fires)

    assert REQUEST_STATE not in port.registered_in  # what it accepts next inherits nothing of that request

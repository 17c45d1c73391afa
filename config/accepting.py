"""Web processes that share one listening socket take turns at it.

The run command opens one listening socket and hands it to every web process (``config.stack``), so that a
process being restarted leaves the port to the others. But the kernel wakes them all for each connection
waiting and the first awake takes every connection queued, up to Twisted's accept loop's limit (100,
growing by 20 while it fills). In a burst that first process took 60 to 80 % of the connections and
set everyone's wait for first words, while another process sat half idle.

Here a process that has just taken ``WEB_ACCEPT_SHARE`` connections steps back from the socket for
``WEB_ACCEPT_PAUSE_S``, leaving the next ones to the others; a process busy with other work wakes later
and takes fewer. Connections waiting meanwhile stay in the kernel's queue (no one is refused), and a process
alone at the socket (the others restarting) only takes them in slices. Only the TCP socket is shared: a
process's own Unix socket (its health check) is not held back.
"""

from __future__ import annotations

import contextvars
import logging
import os
from collections.abc import Callable

from twisted.internet import tcp, unix

# Set by the run command on each web process it starts: how many share the listening socket.
SHARED_BY_ENV = "RECOLLECT_WEB_PROCESSES"

logger = logging.getLogger(__name__)


class _Turns:
    """One port's count of connections taken since it last stepped back."""

    def __init__(self, share: int, pause_s: float) -> None:
        self.share, self.pause_s = share, pause_s
        self.taken = 0

    def read(self, port: tcp.Port, accept: Callable[[tcp.Port], None]) -> None:
        port.numberAccepts = min(port.numberAccepts, self.share - self.taken)
        before = port.sessionno  # counts each connection taken
        accept(port)  # Twisted's accept loop, which handles its own errors
        self.taken += port.sessionno - before
        if self.taken < self.share:
            return
        self.taken = 0
        try:
            port.reactor.callLater(self.pause_s, _resume, port)
        except Exception:  # an error here would make the reactor close the port: accept as Twisted does
            logger.exception("could not step back from the shared socket; taking connections as they come")
            return
        port.stopReading()


def _resume(port: tcp.Port) -> None:
    if port.connected and not port.disconnecting:
        # Twisted runs its timed calls in the context of whatever last set its timer (an HTTP request's,
        # holding that request's thread-sensitive executor), and every connection the socket's reader
        # accepts inherits the context the reader is registered in: a websocket would then look for an
        # executor its request had closed. The reader is registered in a context of its own.
        contextvars.Context().run(port.startReading)


def install(*, share: int, pause_s: float) -> bool:
    """Makes this process take at most ``share`` connections from a shared socket before stepping back for
    ``pause_s``, when the run command says it shares it (``RECOLLECT_WEB_PROCESSES`` > 1); whether it does."""
    if share <= 0 or int(os.environ.get(SHARED_BY_ENV, "1") or 1) <= 1:
        return False
    if not pause_s >= 0:  # also refuses NaN
        raise ValueError(f"the pause at a shared socket must be 0 s or more, not {pause_s!r}")
    if getattr(tcp.Port.doRead, "takes_turns", False):
        return True  # installed already
    accept = tcp.Port.doRead

    def do_read(port: tcp.Port) -> None:
        if isinstance(port, unix.Port):
            return accept(port)
        turns = port.__dict__.get("_recollect_turns")
        if turns is None:
            turns = port.__dict__["_recollect_turns"] = _Turns(share, pause_s)
        return turns.read(port, accept)

    do_read.takes_turns = True
    tcp.Port.doRead = do_read
    return True

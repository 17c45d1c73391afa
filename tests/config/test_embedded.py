"""The embedded servers' shared lifecycle: reuse while anyone holds them, stop with the last holder,
and never mistake another process for a holder or for our server."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from config.embedded import EmbeddedRedis, _Holders, _process_start
from tests.helpers import ROOT


def test_holders_that_died_without_exiting_cleanly_are_pruned(tmp_path):
    holders = _Holders(tmp_path / "svc.holders")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        holders.add(alive.pid)
        # A dead holder recorded earlier (as after a SIGKILL) is no longer counted.
        holders._write([*holders.live(), (dead.pid, 12345)])
        assert [pid for pid, _ in holders.live()] == [alive.pid]
        assert holders.remove(alive.pid) == []
    finally:
        alive.kill()
        alive.wait()


def test_a_holder_is_still_recognised_after_the_system_clock_is_set(tmp_path, monkeypatch):
    holders = _Holders(tmp_path / "svc.holders")
    holders.add(os.getpid())
    # The clock set an hour ahead (NTP, or by hand): psutil's boot and start times both move with it.
    # Changing the machine's clock cannot run here, so psutil's reading of the boot time is shifted.
    booted = psutil._psplatform.boot_time
    monkeypatch.setattr(psutil._psplatform, "boot_time", lambda: booted() + 3600)
    assert [pid for pid, _ in holders.live()] == [os.getpid()]


def test_a_reused_pid_is_not_mistaken_for_a_holder(tmp_path):
    holders = _Holders(tmp_path / "svc.holders")
    me = os.getpid()
    holders._write([(me, _process_start(me) - 1)])  # same pid, another process's start time
    assert holders.live() == []


def test_holder_files_are_private(tmp_path):
    holders = _Holders(tmp_path / "svc.holders")
    holders.add(os.getpid())
    assert oct(holders.path.stat().st_mode & 0o777) == "0o600"


HOLDER = textwrap.dedent(
    """
    import os, sys, time
    os.environ["RECOLLECT_VAR_DIR"] = sys.argv[1]
    from config import embedded
    print(embedded.redis_url(), flush=True)
    time.sleep(float(sys.argv[2]))
    """
)


def _holder(var, seconds: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(var), str(seconds)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    return proc, proc.stdout.readline().strip()


@pytest.mark.slow
def test_redis_is_shared_by_holders_and_stopped_by_the_last_one_even_after_a_crash(tmp_path):
    var = tmp_path / "var"
    first, url = _holder(var, 60)
    second, same_url = _holder(var, 60)
    third, _ = _holder(var, 60)
    service = EmbeddedRedis(var)
    try:
        assert url == same_url, "a second process must reuse the running server"
        server_pid = service._pid()
        assert server_pid is not None
        assert oct((var / "redis").stat().st_mode & 0o777) == "0o700"

        first.kill()  # a crash: no clean release
        first.wait()
        second.send_signal(signal.SIGINT)  # a clean exit (as on Ctrl-C) releases its hold
        second.wait()
        assert psutil.pid_exists(server_pid), "stopped while a holder was still alive"

        third.send_signal(signal.SIGINT)
        third.wait()
        deadline = time.monotonic() + 10
        while psutil.pid_exists(server_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not psutil.pid_exists(server_pid), "the last holder's exit did not stop the server"
    finally:
        for proc in (first, second, third):
            proc.kill()
        if service._pid():
            service._stop()


@pytest.mark.slow
def test_a_start_rewrites_an_append_only_file_grown_far_past_its_data(tmp_path):
    """Every write is appended to Redis's file and read back at each start: grown to hundreds of
    megabytes by queues that come and go, it made a start outlast the wait for it."""
    import redis

    var = tmp_path / "var"
    holder, url = _holder(var, 60)
    service = EmbeddedRedis(var)
    aof = var / "redis" / "appendonly.aof"
    try:
        client = redis.Redis.from_url(url)
        # As after restarts: Redis rewrites it on its own only once it has doubled since the start.
        client.config_set("auto-aof-rewrite-percentage", 0)
        for _ in range(70):  # 70 MB appended, 1 MB kept
            client.set("queue", os.urandom(1024 * 1024))
        time.sleep(1.5)  # appended to the file each second
        assert aof.stat().st_size > 64 * 1024 * 1024
        holder.kill()
        holder.wait()
        service._stop()

        holder, url = _holder(var, 60)
        deadline = time.monotonic() + 20
        while aof.stat().st_size > 8 * 1024 * 1024 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert aof.stat().st_size < 8 * 1024 * 1024
        assert len(redis.Redis.from_url(url).get("queue")) == 1024 * 1024
    finally:
        holder.kill()
        if service._pid():
            service._stop()

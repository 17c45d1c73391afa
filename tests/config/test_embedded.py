"""The embedded servers' shared lifecycle: reuse while anyone holds them, stop with the last holder."""

import subprocess
import sys

from config.embedded import _Holders


def test_holders_that_died_without_exiting_cleanly_are_pruned(tmp_path):
    holders = _Holders(tmp_path / "svc.holders")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        holders.add(dead.pid)
        holders.add(alive.pid)
        assert holders.live() == [alive.pid]
        assert holders.remove(alive.pid) == []
    finally:
        alive.kill()
        alive.wait()


def test_a_holder_is_recorded_once(tmp_path):
    holders = _Holders(tmp_path / "svc.holders")
    holders.add(subprocess.os.getpid())
    holders.add(subprocess.os.getpid())
    assert holders.live() == [subprocess.os.getpid()]

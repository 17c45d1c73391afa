"""``make run`` says "ready" once the site answers well and every web process has warmed up; when that takes
longer than it should, it says so, and still says "ready" when it comes."""

from config import stack


def test_a_late_start_is_said_and_then_ready_is_said_when_it_comes(monkeypatch, capsys):
    answers = {"site": "warming", "processes": False}
    monkeypatch.setattr(stack, "_health", lambda url: "ready" if answers["site"] == "ok" else "no answer")
    monkeypatch.setattr(stack, "web_ready", lambda path, unix_socket: answers["processes"])
    readiness = stack._Readiness("http://127.0.0.1:8000", ["/run/web-1.sock", "/run/web-2.sock"])

    readiness.check(readiness.deadline - 1)
    assert not readiness.settled and capsys.readouterr().out == ""

    answers["site"] = "ok"  # the port answers, but a web process is still warming up
    readiness.check(readiness.deadline + 1)
    out = capsys.readouterr().out
    assert readiness.said_late and not readiness.said_ready
    assert "not healthy after" in out and "a web process is still warming up" in out

    answers["processes"] = True
    readiness.check(readiness.deadline + 1 + stack.HEALTH_CHECK_INTERVAL_S)
    assert readiness.said_ready and "[recollect] ready at http://127.0.0.1:8000/" in capsys.readouterr().out

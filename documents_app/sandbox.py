"""Reading an uploaded file in a process of its own, which the operating system holds to a budget.

A file can be made to cost far more to read than its size suggests (a PDF whose pages share one huge
content stream, an office file whose XML unpacks a hundredfold). ``parsing`` refuses what it can see
coming from the sizes a file declares; this catches the rest: the reading process gets at most so many
seconds of CPU and bytes of memory (``resource.setrlimit``, set in the process itself before it reads a
byte of the file) and is killed after so many seconds of wall-clock time, and whatever happens to it,
the worker that asked only gets an answer or a ``ParseError`` that says which limit the file went over.

Run as ``python -m documents_app.sandbox '<budget and limits as JSON>'`` with the file on standard input;
it writes the parsed document (or the reason it could not be read) as JSON on standard output. It imports
nothing of Django, so it starts in a fraction of a second.
"""

from __future__ import annotations

import dataclasses
import json
import resource
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from documents_app import parsing

# The project's root, from which ``-m documents_app.sandbox`` is found.
ROOT = Path(__file__).resolve().parent.parent
# The CPU limit's grace: past the soft limit the process gets SIGXCPU, past this many seconds more SIGKILL.
CPU_KILL_GRACE_S = 2
# Exit status of a reading process that ran out of memory and could still say so.
EXIT_OUT_OF_MEMORY = 3
MEMORY_SPENT_SHARE = 0.5


@dataclass(frozen=True)
class Budget:
    """What one reading process may spend."""

    cpu_s: int
    wall_s: float
    memory_bytes: int


def _limit_self(budget: Budget) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (budget.cpu_s, budget.cpu_s + CPU_KILL_GRACE_S))
    resource.setrlimit(resource.RLIMIT_AS, (budget.memory_bytes, budget.memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a killed reader leaves no core file behind


def _memory_nearly_spent(budget: Budget) -> bool:
    """Whether this process has at some point held most of its memory budget (its address space holds
    more than its resident memory, so "most" is over half)."""
    peak_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
    return peak_bytes > budget.memory_bytes * MEMORY_SPENT_SHARE


def _as_json(parsed: parsing.Parsed) -> dict:
    return {
        "media_type": parsed.media_type,
        "title": parsed.title,
        "blocks": [[block.level, block.title, block.text, block.made_up] for block in parsed.blocks],
    }


def _from_json(answer: dict) -> parsing.Parsed:
    blocks = [parsing.Block(level, title, text, made_up) for level, title, text, made_up in answer["blocks"]]
    return parsing.Parsed(media_type=answer["media_type"], title=answer["title"], blocks=blocks)


def main(argv: list[str]) -> int:
    """The reading process: limits itself, reads the file from standard input, answers in JSON."""
    config = json.loads(argv[0])
    budget = Budget(**config["budget"])
    _limit_self(budget)
    filename = config["filename"]
    limits = parsing.Limits(**config["limits"])
    data = sys.stdin.buffer.read()
    try:
        answer = {"parsed": _as_json(parsing.parse(data, filename, limits=limits))}
    except parsing.ParseError as exc:
        answer = {"error": str(exc)}
    except MemoryError:
        del data
        return EXIT_OUT_OF_MEMORY
    except RecursionError:
        answer = {"error": "The file is nested too deeply to be read."}
    except Exception as exc:  # a library choking on a malformed file: the reason, never a traceback
        if _memory_nearly_spent(budget):  # lxml reports a failed allocation as an "unknown error"
            return EXIT_OUT_OF_MEMORY
        answer = {"error": f"The file could not be read ({type(exc).__name__})."}
    sys.stdout.write(json.dumps(answer))
    return 0


def _over_budget(returncode: int, budget: Budget) -> str:
    """The reason a person is given for a reading process that did not finish."""
    advice = "If it is a real document, split it into smaller parts or save it again as a plain PDF or DOCX."
    if returncode == EXIT_OUT_OF_MEMORY or returncode == -signal.SIGSEGV:
        return f"Reading the file needed more than {budget.memory_bytes // parsing.MB} MB of memory. {advice}"
    if returncode == -signal.SIGXCPU:
        return f"Reading the file took more than {budget.cpu_s} s of computing time. {advice}"
    if returncode == -signal.SIGKILL:
        return (
            f"Reading the file was stopped: it needed more than {budget.cpu_s} s of computing time or "
            f"{budget.memory_bytes // parsing.MB} MB of memory. {advice}"
        )
    return f"Reading the file stopped unexpectedly (exit status {returncode}). {advice}"


def parse_isolated(data: bytes, filename: str, *, limits: parsing.Limits, budget: Budget) -> parsing.Parsed:
    """``parsing.parse`` in a process held to ``budget``. Raises ParseError for a file that cannot be read
    or goes over a limit, with a reason a person can act on."""
    config = {"filename": filename, "limits": dataclasses.asdict(limits), "budget": dataclasses.asdict(budget)}
    argv = [sys.executable, "-m", "documents_app.sandbox", json.dumps(config)]
    try:
        # run() kills the process on any exception too (a task's time limit interrupting the wait).
        done = subprocess.run(  # noqa: S603 (our own interpreter and module; the file goes on stdin)
            argv, input=data, capture_output=True, timeout=budget.wall_s, cwd=ROOT, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise parsing.ParseError(
            f"Reading the file took longer than {budget.wall_s:.0f} s. If it is a real document, split it into "
            "smaller parts."
        ) from exc
    if done.returncode != 0:
        raise parsing.ParseError(_over_budget(done.returncode, budget))
    try:
        answer = json.loads(done.stdout)
    except ValueError as exc:
        raise parsing.ParseError("Reading the file stopped unexpectedly (an incomplete answer).") from exc
    if "error" in answer:
        raise parsing.ParseError(answer["error"])
    return _from_json(answer["parsed"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

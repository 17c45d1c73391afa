"""Reading an uploaded file in a process of its own, which the operating system holds to a budget.

A file can be made to cost far more to read than its size suggests (a PDF whose pages share one huge
content stream, an office file whose XML unpacks a hundredfold). ``parsing`` refuses what it can see
coming from the sizes a file declares; this catches the rest. Each file is read by a process of its own
that gets at most so many seconds of CPU and bytes of memory (``resource.setrlimit``, set in that process
before it reads a byte of the file) and is killed after so many seconds of wall-clock time. Whatever
happens to it, the caller only gets the parsed document or a ``ParseError`` that says which limit the
file went over.

Starting a Python interpreter and importing pypdf, python-docx, Beautiful Soup and markdown-it for every
file would cost about 100 ms a document (a third of indexing a short note). So each calling process
keeps one *reader* (``python -m documents_app.sandbox``, which imports nothing of Django) with those
libraries loaded, and the reader forks one child per file: the child limits itself, reads the file and
writes its answer to a pipe; the reader enforces the wall clock and reports how the child ended. The
reader ends when its caller goes (end of its standard input), a child when its reader does.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import json
import os
import resource
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from documents_app import parsing

# The project's root, from which ``-m documents_app.sandbox`` is found.
ROOT = Path(__file__).resolve().parent.parent
# The CPU limit's grace: past the soft limit the process gets SIGXCPU, past this many seconds more SIGKILL.
CPU_KILL_GRACE_S = 2
# Exit status of a reading process that ran out of memory and could still say so.
EXIT_OUT_OF_MEMORY = 3
# Exit status of a reading process that failed in a way it could not report.
EXIT_CRASHED = 4
MEMORY_SPENT_SHARE = 0.5
# How long past a file's wall-clock budget the caller waits for its reader before killing the reader too.
READER_GRACE_S = 10.0
# The reader's answer: the size of the child's answer, the child's exit status (negative: the signal that
# ended it) and whether the wall clock ran out; then the answer's bytes.
ANSWER_HEADER = struct.Struct(">qi?")
PR_SET_PDEATHSIG = 1  # linux/prctl.h
PIPE_CHUNK = 1 << 20


@dataclass(frozen=True)
class Budget:
    """What one reading process may spend."""

    cpu_s: int
    wall_s: float
    memory_bytes: int


# --- In the reader and its children ---------------------------------------------------------------------


def _die_with_parent() -> None:
    """Has the kernel kill this process when the one that started it ends (Linux); elsewhere the
    wall-clock limit and the end of standard input still end it."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


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


def _answer(data: bytes, filename: str, limits: parsing.Limits, budget: Budget) -> dict | int:
    """The parsed file or the reason it cannot be read, as JSON; or an exit status for running out of memory."""
    try:
        return {"parsed": _as_json(parsing.parse(data, filename, limits=limits))}
    except parsing.ParseError as exc:
        return {"error": str(exc)}
    except MemoryError:
        return EXIT_OUT_OF_MEMORY
    except RecursionError:
        return {"error": "The file is nested too deeply to be read."}
    except Exception as exc:  # a library choking on a malformed file: the reason, never a traceback
        if _memory_nearly_spent(budget):  # lxml reports a failed allocation as an "unknown error"
            return EXIT_OUT_OF_MEMORY
        return {"error": f"The file could not be read ({type(exc).__name__})."}


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _child(request: dict, data: bytes, answer_fd: int) -> None:
    """One file's reading process (forked by the reader): never returns."""
    status = EXIT_CRASHED
    try:
        _die_with_parent()
        budget = Budget(**request["budget"])
        _limit_self(budget)
        answer = _answer(data, request["filename"], parsing.Limits(**request["limits"]), budget)
        if isinstance(answer, int):
            status = answer
        else:
            _write_all(answer_fd, json.dumps(answer).encode())
            status = 0
    except MemoryError:
        status = EXIT_OUT_OF_MEMORY
    finally:
        os._exit(status)  # no cleanup of what the reader owns: the child shares it


def _collect(pid: int, answer_fd: int, wall_s: float) -> tuple[bytes, int, bool]:
    """The child's answer as it writes it, its exit status and whether it was killed for the wall clock."""
    chunks, timed_out = [], False
    deadline = time.monotonic() + wall_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            timed_out = True
            break
        if select.select([answer_fd], [], [], left)[0]:
            chunk = os.read(answer_fd, PIPE_CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(answer_fd)
    _, status = os.waitpid(pid, 0)
    returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    return b"".join(chunks), returncode, timed_out


def _read_exactly(stream, size: int) -> bytes | None:
    data = stream.read(size)
    return data if len(data) == size else None


def serve() -> int:
    """The reader: for each request on standard input (a line of JSON, then the file's bytes), forks a child
    that reads the file, and answers on standard output. Ends at the end of its input."""
    _die_with_parent()
    parsing.preload()
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    while line := requests.readline():
        request = json.loads(line)
        data = _read_exactly(requests, request["size"])
        if data is None:
            return 0
        answer_read, answer_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(answer_read)
            _child(request, data, answer_write)
        os.close(answer_write)
        answer, returncode, timed_out = _collect(pid, answer_read, request["budget"]["wall_s"])
        answers.write(ANSWER_HEADER.pack(len(answer), returncode, timed_out) + answer)
        answers.flush()
    return 0


# --- In the caller ----------------------------------------------------------------------------------------


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


def _too_long(budget: Budget) -> str:
    return (
        f"Reading the file took longer than {budget.wall_s:g} s. If it is a real document, split it into smaller parts."
    )


class ReaderGone(Exception):
    """The reader process ended, or stopped answering in time (not the child reading a file)."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class _Reader:
    """This process's reader: started when first needed, started again if it died."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.lock = threading.Lock()

    def _start(self) -> subprocess.Popen:
        argv = [sys.executable, "-m", "documents_app.sandbox"]
        return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)  # noqa: S603

    def stop(self) -> None:
        if self.process is not None:
            with contextlib.suppress(OSError):
                self.process.kill()
                self.process.wait(timeout=10)
            for stream in (self.process.stdin, self.process.stdout):
                with contextlib.suppress(OSError):
                    stream.close()
            self.process = None

    def _receive(self, size: int, deadline: float) -> bytes:
        fd, chunks, left = self.process.stdout.fileno(), [], size
        while left:
            if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise ReaderGone("no answer in time", timed_out=True)
            chunk = os.read(fd, min(left, PIPE_CHUNK))
            if not chunk:
                raise ReaderGone("the reading process ended")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def read(self, request: dict, data: bytes, wall_s: float) -> tuple[bytes, int, bool]:
        """The child's answer, exit status and whether the wall clock ran out. Raises ReaderGone."""
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                self.stop()
                self.process = self._start()
            try:
                self.process.stdin.write(json.dumps({**request, "size": len(data)}).encode() + b"\n" + data)
                self.process.stdin.flush()
                deadline = time.monotonic() + wall_s + READER_GRACE_S
                size, returncode, timed_out = ANSWER_HEADER.unpack(self._receive(ANSWER_HEADER.size, deadline))
                return self._receive(size, deadline), returncode, timed_out
            except BaseException as exc:
                # Whatever interrupted the exchange (a reader gone, a task's time limit), the next one must
                # not read this one's answer: the reader goes, and the child reading with it.
                self.stop()
                if isinstance(exc, OSError):
                    raise ReaderGone(str(exc)) from exc
                raise


_reader = _Reader()


def parse_isolated(data: bytes, filename: str, *, limits: parsing.Limits, budget: Budget) -> parsing.Parsed:
    """``parsing.parse`` in a process held to ``budget``. Raises ParseError for a file that cannot be read
    or goes over a limit, with a reason a person can act on."""
    request = {"filename": filename, "limits": dataclasses.asdict(limits), "budget": dataclasses.asdict(budget)}
    try:
        try:
            answer, returncode, timed_out = _reader.read(request, data, budget.wall_s)
        except ReaderGone as exc:
            if exc.timed_out:
                raise
            # Once more with a new reader: the old one may have been ended by something else.
            answer, returncode, timed_out = _reader.read(request, data, budget.wall_s)
    except ReaderGone as exc:
        if exc.timed_out:
            raise parsing.ParseError(_too_long(budget)) from exc
        raise parsing.ParseError(f"Reading the file stopped unexpectedly ({exc}).") from exc
    if timed_out:
        raise parsing.ParseError(_too_long(budget))
    if returncode != 0:
        raise parsing.ParseError(_over_budget(returncode, budget))
    try:
        parsed = json.loads(answer)
    except ValueError as exc:
        raise parsing.ParseError("Reading the file stopped unexpectedly (an incomplete answer).") from exc
    if "error" in parsed:
        raise parsing.ParseError(parsed["error"])
    return _from_json(parsed["parsed"])


if __name__ == "__main__":
    sys.exit(serve())

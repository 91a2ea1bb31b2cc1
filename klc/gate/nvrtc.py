"""NVRTC in a child process: a compile that crashes or never ends costs its file, not klc.

NVRTC is native code that trusts its input: a 100,000-character kernel name made it abort
the whole process while printing ptxas's report (``-Xptxas=-v``), and a call with 100,000
arguments compiled for minutes with Ctrl-C ignored (a native call holds the main thread).
So every compile runs in a compile server, ``python -m klc.gate.nvrtc``: one long-lived child
per klc process (started on the first compile, kept for the next; this file run as a script),
fed one request per line
on its stdin, answering one line on its stdout. The parent waits with a time limit
(``$KLC_COMPILE_TIMEOUT_S``, default ``DEFAULT_TIMEOUT_S``) and stays interruptible while it
waits; at the limit, on Ctrl-C or on any error, the child is killed, and the next compile
starts a fresh one.

What the caller gets is a ``Reply``: NVRTC's answer, or why there is none (``failure``: the
child timed out, or died, with the signal and the last lines it wrote). A child that dies
while ptxas writes its report (``-Xptxas=-v``) is asked once more without the report: the
file compiles, with no resource figures, and the reply says why (``note``).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klc.errors import KlcError

DEFAULT_TIMEOUT_S = 180.0  # one compile: real kernels take seconds, the largest a minute
TIMEOUT_ENV = "KLC_COMPILE_TIMEOUT_S"
VERBOSE_PTXAS = "-Xptxas=-v"


def timeout_s() -> float:
    """The time limit of one compile: ``$KLC_COMPILE_TIMEOUT_S``, else the default."""
    value = os.environ.get(TIMEOUT_ENV, "")
    if not value:
        return DEFAULT_TIMEOUT_S
    try:
        t = float(value)
    except ValueError:
        t = float("nan")
    if not 0 < t <= 86400:  # (NaN fails too)
        raise KlcError(f"{TIMEOUT_ENV}={value!r}: expected seconds, more than 0 and at most "
                       "86400")
    return t


@dataclass
class Reply:
    """NVRTC's answer to one compile, or why there is none."""

    ok: bool = False
    log: str = ""
    lowered: dict[str, str] = field(default_factory=dict)
    cubin: bytes = b""
    invalid_option: bool = False  # NVRTC refused the options (NVRTC_ERROR_INVALID_OPTION)
    error: str = ""  # NVRTC's own error name when the compile failed
    failure: str = ""  # no answer: the child timed out or died (a sentence)
    note: str = ""  # something the caller should pass on (the report left out, and why)
    options: tuple[str, ...] = ()  # the options NVRTC was given in the end


class _Server:
    """One compile child and its pipes."""

    def __init__(self) -> None:
        self.pid = os.getpid()  # a forked klc process starts its own child
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (held for the child's life)
        self.proc = subprocess.Popen(
            # run as a file, not ``-m klc.gate.nvrtc``: importing the gate package would cost
            # the child half a second; -P keeps this folder (compile.py, profile.py) off its path
            [sys.executable, "-P", os.path.abspath(__file__)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.stderr, env=_child_env(),
            start_new_session=True)  # a Ctrl-C at the terminal reaches klc, which kills it
        self.buffer = b""

    def ask(self, request: dict[str, Any], limit_s: float) -> dict[str, Any] | str:
        """The child's reply to ``request``, or a sentence saying why there is none (the
        child is then dead). Interruptible: Ctrl-C kills the child and propagates."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        line = (json.dumps(request) + "\n").encode()
        try:
            self.proc.stdin.write(line)
            self.proc.stdin.flush()
        except OSError:
            return self._died()
        deadline = time.monotonic() + limit_s
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.kill()
                    return (f"NVRTC did not finish within {limit_s:g} s (${TIMEOUT_ENV}); "
                            "the compile was stopped")
                if not sel.select(min(left, 1.0)):
                    continue
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return self._died()
                self.buffer += chunk
        text, _, self.buffer = self.buffer.partition(b"\n")
        try:
            doc = json.loads(text)
        except ValueError:
            self.kill()
            return "the NVRTC child answered something that is not JSON"
        if not isinstance(doc, dict):
            self.kill()
            return "the NVRTC child answered something that is not a reply"
        return doc

    def _died(self) -> str:
        rc = self.proc.wait()
        self.stderr.seek(0)
        tail = self.stderr.read()[-2000:].decode("utf-8", "replace").strip().splitlines()[-2:]
        self.close()
        if rc < 0:
            try:
                how = f"was killed by {signal.Signals(-rc).name}"
            except ValueError:
                how = f"was killed by signal {-rc}"
        else:
            how = f"exited with status {rc}"
        return f"NVRTC crashed (its process {how})" + (
            f": {' | '.join(t.strip() for t in tail)}" if tail else "")

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.proc.wait()
        self.close()

    def close(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout, self.stderr):
            with contextlib.suppress(OSError, AttributeError):
                f.close()

    @property
    def alive(self) -> bool:
        return self.pid == os.getpid() and self.proc.poll() is None


def _child_env() -> dict[str, str]:
    """This environment, with klc importable from this checkout (as the gate's children)."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                else "")
    return env


_LOCK = threading.Lock()
_SERVER: _Server | None = None


def _forget_after_fork() -> None:
    # a forked process must not share the parent's child (its pipes are the parent's)
    global _SERVER, _LOCK
    _SERVER, _LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def shutdown() -> None:
    """Stop this process's compile child now (at exit it stops by itself: its stdin ends,
    and on Linux it is killed with its parent)."""
    global _SERVER
    server, _SERVER = _SERVER, None
    if server is not None and server.pid == os.getpid():
        server.kill()


def compile_program(source: str, program: str, options: tuple[str, ...],
                    name_expressions: tuple[str, ...], limit_s: float | None = None) -> Reply:
    """Compile with NVRTC in the compile child (see the module doc)."""
    limit = timeout_s() if limit_s is None else limit_s
    request = {"source": source, "program": program, "options": list(options),
               "names": list(name_expressions)}
    doc = _ask(request, limit)
    note = ""
    if isinstance(doc, str) and VERBOSE_PTXAS in options and not doc.startswith("NVRTC did not"):
        # NVRTC crashed; writing ptxas's report can crash it (a very long name), and the code
        # may well compile without the report
        quiet = tuple(o for o in options if o != VERBOSE_PTXAS)
        again = _ask({**request, "options": list(quiet)}, limit)
        if isinstance(again, dict):
            note = (f"no register or spill figures: NVRTC crashed writing ptxas's report "
                    f"({doc}), and compiled without it")
            doc, options = again, quiet
    if isinstance(doc, str):
        return Reply(failure=doc, options=options)
    try:
        return Reply(ok=bool(doc["ok"]), log=str(doc.get("log", "")),
                     lowered={str(k): str(v) for k, v in dict(doc.get("lowered", {})).items()},
                     cubin=base64.b64decode(doc.get("cubin", "")),
                     invalid_option=bool(doc.get("invalid_option")),
                     error=str(doc.get("error", "")), note=note, options=options)
    except (KeyError, TypeError, ValueError) as e:
        return Reply(failure=f"the NVRTC child's reply is malformed ({e})", options=options)


def _ask(request: dict[str, Any], limit_s: float) -> dict[str, Any] | str:
    global _SERVER
    with _LOCK:
        if _SERVER is None or not _SERVER.alive:
            try:
                _SERVER = _Server()
            except OSError as e:
                return f"cannot start the NVRTC child process: {e.strerror or e}"
        server = _SERVER
        try:
            doc = server.ask(request, limit_s)
        except BaseException:  # Ctrl-C, an alarm: the compile in flight is abandoned
            server.kill()
            _SERVER = None
            raise
        if isinstance(doc, str):
            _SERVER = None
        return doc


# --------------------------------------------------------------------------------------
# The child


def _serve() -> int:
    """Answer compile requests, one JSON line each, until stdin ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when this one stops
    _die_with_parent()
    reply_fd = os.dup(1)
    os.dup2(2, 1)  # anything native code prints goes to stderr, never into a reply
    out = os.fdopen(reply_fd, "wb")
    from cupy_backends.cuda.libs import nvrtc

    for raw in sys.stdin.buffer:
        req = json.loads(raw)
        prog = nvrtc.createProgram(req["source"], req["program"], [], [])
        reply: dict[str, Any]
        try:
            for ne in req["names"]:
                nvrtc.addNameExpression(prog, ne)
            try:
                nvrtc.compileProgram(prog, req["options"])
            except nvrtc.NVRTCError as e:
                reply = {"ok": False, "log": nvrtc.getProgramLog(prog), "error": str(e),
                         "invalid_option": "INVALID_OPTION" in str(e)}
            else:
                reply = {"ok": True, "log": nvrtc.getProgramLog(prog),
                         "lowered": {ne: nvrtc.getLoweredName(prog, ne) for ne in req["names"]},
                         "cubin": base64.b64encode(nvrtc.getCUBIN(prog)).decode()}
        finally:
            nvrtc.destroyProgram(prog)
        out.write((json.dumps(reply) + "\n").encode())
        out.flush()
    return 0


def _die_with_parent() -> None:
    """Linux: this child gets SIGKILL when klc ends, however it ends."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent ended before the call above
            os._exit(0)


if __name__ == "__main__":
    sys.exit(_serve())

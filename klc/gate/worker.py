"""The persistent gate worker: one long-lived child process per GPU serves many gate jobs.

Starting a child per trial (Python, CuPy, a CUDA context, the SOL figures) costs about a
second; ``klc optimize`` and ``klc lineage`` run hundreds of trials. So ``gate()`` hands its
jobs to a worker that stays up between them, keyed by ``CUDA_VISIBLE_DEVICES`` (each GPU of a
batch gets its own). Isolation is what the gate requires (docs/spec.md, "Isolation"):

- every job has a timeout: at the deadline the worker's process group is killed and the job
  fails, named by the step it was in; the next job starts a fresh worker;
- a crash (the worker dies: a signal, an exit) fails the job with the reason, and the next
  job starts a fresh worker;
- after ANY CUDA error (a fault leaves the context unusable, and even a harmless-looking error
  is not worth the doubt), after a write outside a buffer (it may have reached memory the
  next job relies on), or an unexpected error in the job, the worker answers and exits
  (*retires*); the next job starts a fresh worker;
- each job allocates its buffers and gives them back; the reference's cached verify outputs
  are host copies (read-only, checksummed), compared on the host, except its outputs at
  the profiling size, kept on the device and checksummed before each use (a wild write that
  reached them drops them: the reference runs again).

Protocol (JSON lines; the parent writes the worker's stdin, reads its stdout):

    parent -> worker   {"id": 7, "op": "gate", "job": {...}}      run a job (klc.gate.runner)
                       {"id": 8, "op": "ping"}                     {"pid", "jobs"} back
                       {"op": "exit"}                              leave (so does EOF)
    worker -> parent   {"id": 7, "progress": "verify n=5: candidate run"}  before each step
                       {"id": 7, "state": {...}}                   the result so far
                       {"id": 7, "result": {...}, "retire": ""}    the job's end; a
                                                                   non-empty retire: the
                                                                   worker exits after it
                       {"id": 7, "error": "Type: message", "retire": "..."}  the job
                                                                   raised; the worker exits

The worker keeps the protocol's stdout to itself (anything else printing goes to stderr),
exits when its stdin closes or its parent dies (``PR_SET_PDEATHSIG`` on Linux, and a check of
the parent's pid), and skips interpreter teardown (freeing memory in a broken CUDA context
can hang). The parent shuts its workers down at exit (``atexit``).

The parent also keeps the reference's timings (``klc.gate.profile``: timed once per trial
series, then checked for drift), so that a retired worker does not cost the next trial a
full reference series.
"""

from __future__ import annotations

import atexit
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
from collections import OrderedDict
from collections.abc import Callable
from typing import IO, Any

from klc.gate.child import ChildOutcome, ProcessOutcome, child_env

ISOLATION_MODES = ("worker", "process")
EXIT_GRACE_S = 2.0
MAX_TIMINGS = 256
_TIMING_KEYS = ("median_ms", "min_ms", "p10_ms", "p90_ms", "runs", "flushed_l2", "spread")


def isolation_mode(value: str | None = None) -> str:
    """``value``, else ``$KLC_GATE_ISOLATION``, else "worker"; anything else is an error."""
    from klc.errors import KlcError

    mode = value or os.environ.get("KLC_GATE_ISOLATION") or "worker"
    if mode not in ISOLATION_MODES:
        where = "isolation" if value else "KLC_GATE_ISOLATION"
        raise KlcError(f"{where}={mode!r}: the gate's isolation is one of "
                       f"{', '.join(ISOLATION_MODES)}")
    return mode


# --------------------------------------------------------------------------------------
# Parent side


class GateWorker:
    """One worker process and the parent's end of its pipes."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None):
        self.err = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the worker)
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, start_new_session=True, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout_fd = self.proc.stdout.fileno()
        self.buffer = b""
        self.jobs = 0
        self.next_id = 0
        self.started = time.monotonic()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _lines(self, deadline: float) -> Any:
        """Yield the worker's lines until EOF; None when the deadline passes first."""
        with selectors.DefaultSelector() as sel:
            sel.register(self.stdout_fd, selectors.EVENT_READ)
            while True:
                while b"\n" in self.buffer:
                    line, self.buffer = self.buffer.split(b"\n", 1)
                    yield line
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(timeout=left):
                    yield None
                    return
                chunk = os.read(self.stdout_fd, 1 << 16)
                if not chunk:
                    return  # EOF: the worker is gone
                self.buffer += chunk

    def request(self, op: str, payload: dict[str, Any] | None, timeout_s: float
                ) -> tuple[dict[str, Any] | None, ProcessOutcome]:
        """Send one request and wait for its end. Returns (the final message, or None when
        the worker died or timed out; how it went). A worker that timed out is killed."""
        t0 = time.monotonic()
        self.next_id += 1
        mid = self.next_id
        err_start = self._err_size()
        msg = {"id": mid, "op": op, **({"job": payload} if payload is not None else {})}
        progress, state = "", None
        try:
            self.stdin.write(json.dumps(msg).encode() + b"\n")
            self.stdin.flush()
        except (BrokenPipeError, OSError):
            return None, self._ended(t0, progress, False, err_start)
        for line in self._lines(t0 + timeout_s):
            if line is None:
                self.kill()
                return ({"state": state} if state is not None else None), \
                    self._ended(t0, progress, True, err_start)
            try:
                reply = json.loads(line)
            except ValueError:
                continue  # not ours: the protocol's lines are JSON
            if reply.get("id") != mid:
                continue
            if "progress" in reply:
                progress = str(reply["progress"])
            elif "state" in reply:
                state = reply["state"]
            elif "result" in reply or "error" in reply:
                self.jobs += 1
                if state is not None and "state" not in reply:
                    reply["state"] = state
                out = ProcessOutcome(0 if not reply.get("retire") else None, False,
                                     time.monotonic() - t0, progress, "",
                                     str(reply.get("error", "")))
                return reply, out
        self.proc.wait()
        ended = self._ended(t0, progress, False, err_start)
        return ({"state": state} if state is not None else None), ended

    def _err_size(self) -> int:
        try:
            return os.fstat(self.err.fileno()).st_size
        except (OSError, ValueError):
            return 0

    def _ended(self, t0: float, progress: str, timed_out: bool, err_start: int
               ) -> ProcessOutcome:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        tail = ""
        with contextlib.suppress(OSError, ValueError):
            end = self._err_size()
            start = max(err_start, end - 4000)  # this job's part of the worker's stderr
            tail = os.pread(self.err.fileno(), end - start, start).decode("utf-8", "replace")
        return ProcessOutcome(self.proc.returncode, timed_out, time.monotonic() - t0,
                              progress, tail)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._close_files()

    def close(self, grace_s: float = EXIT_GRACE_S) -> None:
        """Ask the worker to leave; kill it if it does not within ``grace_s``."""
        if self.alive():
            with contextlib.suppress(OSError, ValueError):
                self.stdin.write(b'{"op": "exit"}\n')
                self.stdin.flush()
            with contextlib.suppress(OSError, ValueError):
                self.stdin.close()
            try:
                self.proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self.kill()
        self._close_files()

    def forget(self) -> None:
        """After a fork: drop this process's copies of the pipes, leave the worker alone."""
        self._close_files()

    def _close_files(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout, self.err):
            with contextlib.suppress(OSError, ValueError):
                if f is not None:
                    f.close()


def worker_argv() -> list[str]:
    return [sys.executable, "-m", "klc.gate.worker", str(os.getpid())]


class WorkerPool:
    """Workers by ``CUDA_VISIBLE_DEVICES`` value, each serving one job at a time, and the
    reference timings measured through them."""

    def __init__(self, argv: Callable[[], list[str]] = worker_argv):
        self.argv = argv
        self.workers: dict[str, GateWorker] = {}
        self.locks: dict[str, threading.Lock] = {}
        self.lock = threading.Lock()
        self.timings: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.started = 0  # workers started, over the pool's life
        self.retired: list[str] = []  # why each worker that ended early did

    @staticmethod
    def key() -> str:
        return os.environ.get("CUDA_VISIBLE_DEVICES", "")

    def _lock(self, key: str) -> threading.Lock:
        with self.lock:
            return self.locks.setdefault(key, threading.Lock())

    def _worker(self, key: str) -> GateWorker:
        w = self.workers.get(key)
        if w is not None and w.alive():
            return w
        if w is not None:
            w.close(0)
        w = GateWorker(self.argv(), child_env())
        self.workers[key] = w
        self.started += 1
        return w

    def run(self, job: dict[str, Any], timeout_s: float) -> ChildOutcome:
        """Run a gate job on this GPU's worker (see the module doc)."""
        key = self.key()
        with self._lock(key):
            w = self._worker(key)
            reply, outcome = w.request("gate", job, timeout_s)
            if reply is None and not outcome.timed_out and not outcome.progress:
                # the worker was gone before the job started (it died between jobs, or did
                # not start): one fresh worker, same job
                self._retire(key, w, "the worker was gone before the job")
                w = self._worker(key)
                reply, outcome = w.request("gate", job, timeout_s)
            reply = reply or {}
            retire = reply.get("retire") or ""
            if "result" not in reply and "error" not in reply:
                retire = outcome.describe(timeout_s)
            if retire:
                self._retire(key, w, str(retire))
        result = reply.get("result") or reply.get("state") or {}
        return ChildOutcome(result, outcome)

    def ping(self, timeout_s: float = 60) -> dict[str, Any]:
        """The worker's pid and job count (starts one if needed)."""
        key = self.key()
        with self._lock(key):
            w = self._worker(key)
            reply, outcome = w.request("ping", None, timeout_s)
            if reply is None or "result" not in reply:
                self._retire(key, w, outcome.describe(timeout_s))
                return {}
            return dict(reply["result"])

    def _retire(self, key: str, w: GateWorker, why: str) -> None:
        self.retired.append(why)
        if self.workers.get(key) is w:
            del self.workers[key]
        if w.alive():
            w.close(EXIT_GRACE_S)
        else:
            w.kill()

    def timing(self, key: str) -> dict[str, Any] | None:
        with self.lock:
            t = self.timings.get(key)
            if t is not None:
                self.timings.move_to_end(key)
            return t

    def keep_timing(self, key: str, series: dict[str, Any]) -> None:
        entry = {k: series[k] for k in _TIMING_KEYS if k in series}
        if "median_ms" not in entry:
            return
        with self.lock:
            self.timings[key] = entry
            self.timings.move_to_end(key)
            while len(self.timings) > MAX_TIMINGS:
                self.timings.popitem(last=False)

    def shutdown(self) -> None:
        with self.lock:
            workers, self.workers = list(self.workers.values()), {}
        for w in workers:
            w.close()

    def forget(self) -> None:
        for w in self.workers.values():
            w.forget()
        self.workers = {}
        self.locks = {}
        self.lock = threading.Lock()


_POOL: WorkerPool | None = None
_POOL_LOCK = threading.Lock()


def pool() -> WorkerPool:
    """This process's pool (made on first use, shut down at exit)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = WorkerPool()
            atexit.register(_POOL.shutdown)
        return _POOL


def _after_fork_in_child() -> None:
    """A forked process must not talk to its parent's workers (their pipes are shared)."""
    global _POOL, _POOL_LOCK
    _POOL_LOCK = threading.Lock()
    if _POOL is not None:
        _POOL.forget()
        _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# --------------------------------------------------------------------------------------
# Worker side

Handler = Callable[[dict[str, Any], Callable[[str, Any], None]], tuple[dict[str, Any], str]]


def _die_with_parent(parent_pid: int) -> None:
    """Exit when the parent does: SIGKILL from the kernel on Linux, else a watch thread."""
    from klc.interrupts import die_with_parent

    die_with_parent()
    if parent_pid and os.getppid() != parent_pid:
        os._exit(0)  # the parent died before the request above was in place

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if parent_pid and os.getppid() != parent_pid:
                os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def serve(run_job: Handler, parent_pid: int = 0) -> None:
    """Answer requests from stdin until "exit" or EOF (see the module doc), then leave
    without interpreter teardown. ``run_job(job, send)`` returns (the result, why the worker
    must retire: "" to go on); ``send(kind, payload)`` reports progress and state."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints (libraries, kernels' printf) go to stderr, not the protocol
    _die_with_parent(parent_pid)
    lock = threading.Lock()

    def emit(obj: dict[str, Any]) -> None:
        data = json.dumps(obj).encode() + b"\n"
        with lock:
            out.write(data)
            out.flush()

    jobs = 0
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            break
        try:
            msg = json.loads(line)
        except ValueError:
            sys.stderr.write(f"klc gate worker: not a JSON request: {line[:200]!r}\n")
            os._exit(2)
        mid, op = msg.get("id"), msg.get("op")
        if op == "exit":
            break
        if op == "ping":
            emit({"id": mid, "result": {"pid": os.getpid(), "jobs": jobs}})
            continue
        if op != "gate":
            emit({"id": mid, "error": f"unknown request {op!r}", "retire": "protocol error"})
            os._exit(2)

        def send(kind: str, payload: Any, mid: Any = mid) -> None:
            emit({"id": mid, kind: payload})

        jobs += 1
        try:
            result, retire = run_job(msg["job"], send)
        except Exception as e:  # the job's own failures are results: this is the unexpected
            import traceback

            traceback.print_exc()
            emit({"id": mid, "error": f"{type(e).__name__}: {e}",
                  "retire": f"unexpected {type(e).__name__} in the worker"})
            os._exit(1)
        emit({"id": mid, "result": result, "retire": retire})
        if retire:
            os._exit(0)
    os._exit(0)


def gate_handler(make_device: Callable[[], Any] | None = None) -> Handler:
    """The job runner, with one session for the worker's life (on the GPU through CuPy
    unless ``make_device`` says otherwise)."""
    from klc.gate.device import CudaDevice
    from klc.gate.runner import JobRunner
    from klc.gate.session import Session

    session = Session(make_device or CudaDevice)

    def run_job(job: dict[str, Any], send: Callable[[str, Any], None]
                ) -> tuple[dict[str, Any], str]:
        runner = JobRunner(session, job, lambda text: send("progress", text),
                           lambda result: send("state", result))
        retire = runner.run()
        result = runner.result
        del runner
        if not retire:
            try:
                session.device.release()
            except session.device.errors as e:
                retire = f"CUDA error: {e}"
        session.jobs += 1
        return result, retire

    return run_job


def main(argv: list[str]) -> int:
    parent = int(argv[0]) if argv else 0
    serve(gate_handler(), parent)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

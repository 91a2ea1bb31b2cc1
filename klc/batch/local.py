"""The local executor: worker processes (and one per GPU for the gate), results streamed
back in guided self-scheduled chunks.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from klc.batch.config import ERROR, GATE_FAILED, REWRITTEN, BatchConfig, FileResult
from klc.batch.walk import Source
from klc.batch.worker import (
    WorkerState,
    _gate_job,
    _init_worker,
    _rules_for,
    _settle,
    _work_chunk,
    _worker_init,
    process_path,
)
from klc.errors import KlcError, shown
from klc.interrupts import end_pool

if TYPE_CHECKING:
    pass

# GPUs


def discover_gpus() -> list[str]:
    """The GPU ids this machine offers: ``CUDA_VISIBLE_DEVICES`` when set, else ``nvidia-smi
    -L``, else CuPy's device count; none when nothing answers."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        ids = [v.strip() for v in visible.split(",") if v.strip()]
        return [] if not ids or ids[0].startswith("-") else ids
    exe = shutil.which("nvidia-smi")
    if exe:
        try:
            out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=20,
                                 check=False).stdout
            n = sum(1 for line in out.splitlines() if line.startswith("GPU "))
            if n:
                return [str(i) for i in range(n)]
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        import cupy

        return [str(i) for i in range(int(cupy.cuda.runtime.getDeviceCount()))]
    except Exception:  # no driver, no library, no device: all mean none
        return []


def cannot_start(jobs: int, e: BaseException) -> str:
    """The message for worker processes (or their threads) the system would not start."""
    why = getattr(e, "strerror", None) or str(e) or type(e).__name__
    return (f"cannot start the worker processes of -j {jobs} ({why}: a limit on processes, "
            "threads or memory); nothing more was done: give a smaller -j")


# --------------------------------------------------------------------------------------
# Executors: each runs the work for a list of sources and hands every result to a callback


OnResult = Callable[[Source, FileResult], None]


class LocalExecutor:
    """Worker processes on this machine.

    ``jobs`` processes rewrite files, fed chunks of paths; with ``--gate`` or ``--optimize``
    and GPUs present, one more process per GPU (``CUDA_VISIBLE_DEVICES`` set to that GPU
    alone) gates each candidate, or optimizes each file. With ``jobs == 1`` and no GPU the
    work runs in this process (no process start at all).

    The rewriting workers are forked by ``prefork`` when the driver has no other thread yet
    (Linux): they start with the driver's modules and loaded rules, 0.3 s sooner than
    spawned ones that import klc and load the rules again. Any other time (a thread is
    running, another system, a pool started again after a worker died, GPU workers, which
    hold a CUDA context) they are spawned: forking a process with threads can copy a lock
    that another thread held, and the child then waits on it forever."""

    name = "local"

    def __init__(self, jobs: int, gpus: Sequence[str] = ()) -> None:
        self.jobs = max(1, jobs)
        self.gpus = list(gpus)
        self._forked: Any = None  # (pool, its initializer's arguments)

    def start(self) -> None:
        """Nothing to join: worker processes start with the work (or ``prefork``)."""

    def prefork(self, config: BatchConfig, want_diff: bool, send_unchanged: bool) -> None:
        """Fork the rewriting workers now, if that is safe (see the class doc)."""
        import concurrent.futures as cf
        import multiprocessing as mp
        import threading

        if self.jobs == 1 or (self.gpus and (config.gate or config.optimize)) \
                or not sys.platform.startswith("linux") or threading.active_count() > 1:
            return
        init = _worker_init(config, want_diff, False, send_unchanged)
        pool = cf.ProcessPoolExecutor(self.jobs, mp.get_context("fork"), _init_worker, init)
        try:
            # a first task makes the pool fork all its workers, then start its manager thread
            pool.submit(len, ()).result()
        except Exception:  # a worker that could not start: ``run`` spawns them as before
            pool.shutdown(wait=False, cancel_futures=True)
            return
        except BaseException:  # Ctrl-C while forking: no worker is left behind
            end_pool(pool)
            raise
        self._forked = (pool, init)

    def stop(self) -> None:
        """The pools are shut down at the end of ``run``; a forked one that ``run`` did not
        take (no file to do, or other work), here."""
        if self._forked is not None:
            end_pool(self._forked[0])
            self._forked = None

    def run(self, config: BatchConfig, sources: list[Source], on_result: OnResult,
            want_diff: bool, send_unchanged: bool) -> None:
        use_gpus = bool(self.gpus) and (config.gate or config.optimize)
        if use_gpus and config.optimize:
            self._run_on_gpus(config, sources, on_result, want_diff, send_unchanged)
            return
        if self.jobs == 1 and not use_gpus:
            state = WorkerState(config, _rules_for(config), want_diff, True, False,
                                send_unchanged)
            for src in sources:
                on_result(src, process_path(state, src.path))
            return
        self._run_pool(config, sources, on_result, want_diff, send_unchanged, use_gpus)

    def _run_pool(self, config: BatchConfig, sources: list[Source], on_result: OnResult,
                  want_diff: bool, send_unchanged: bool, use_gpus: bool) -> None:
        """Chunks of paths to ``jobs`` processes. A worker that dies (a crash in native code,
        the OOM killer) breaks the pool: the files it had not finished are run again in a
        fresh pool, one per task in one process, until the file that kills its worker is
        found; that file is an error, and the rest goes on in parallel again."""
        import concurrent.futures as cf
        import multiprocessing as mp
        from concurrent.futures.process import BrokenProcessPool

        ctx = mp.get_context("spawn")
        by_path = {s.path: s for s in sources}
        gates = _GatePools(ctx, config, self.gpus, send_unchanged) if use_gpus else None
        init = _worker_init(config, want_diff, use_gpus, send_unchanged)

        def deliver(res: FileResult) -> None:
            if gates is not None and config.gate and res.status == REWRITTEN:
                gates.submit(res)
            else:
                on_result(by_path[res.path], res)

        todo = [s.path for s in sources]
        isolate = False
        try:
            while todo:
                if self._forked is not None and self._forked[1] == init and not isolate:
                    pool, self._forked = self._forked[0], None
                else:
                    pool = cf.ProcessPoolExecutor(
                        1 if isolate else max(1, min(self.jobs, len(todo))), ctx,
                        _init_worker, init)
                try:
                    try:
                        tasks = {pool.submit(_work_chunk, c): c
                                 for c in chunks(todo, self.jobs, isolate)}
                    except BrokenProcessPool:
                        raise
                    except (OSError, RuntimeError) as e:  # a process or thread limit
                        # the workers that did start wait for work no manager will send, and
                        # the interpreter would wait for them at exit: killed here
                        for proc in list((getattr(pool, "_processes", None) or {}).values()):
                            with contextlib.suppress(OSError, AttributeError, ValueError):
                                proc.kill()
                        raise KlcError(cannot_start(self.jobs, e)) from None
                    left = _drain(tasks, gates, deliver, on_result, by_path)
                finally:
                    end_pool(pool)
                if left and isolate:  # the first file not finished killed its worker
                    culprit, left = left[0], left[1:]
                    on_result(by_path[culprit], FileResult(
                        culprit, ERROR, f"{shown(culprit)}: the worker process died while "
                        "processing this file (a crash in native code, or killed for memory)"))
                isolate = bool(left) and not isolate
                todo = left
            while gates is not None and gates.busy:
                _drain({}, gates, deliver, on_result, by_path)
        except BaseException:
            if gates is not None:
                gates.close(cancel=True)
            raise
        if gates is not None:
            gates.close(cancel=False)

    def _run_on_gpus(self, config: BatchConfig, sources: list[Source], on_result: OnResult,
                     want_diff: bool, send_unchanged: bool) -> None:
        """--optimize with GPUs: each file is optimized on one GPU worker (its trials are
        gated there), one file per GPU at a time; a worker that dies costs its file only."""
        import concurrent.futures as cf
        import multiprocessing as mp
        from concurrent.futures.process import BrokenProcessPool

        ctx = mp.get_context("spawn")

        def pool(gpu: str) -> cf.ProcessPoolExecutor:
            return cf.ProcessPoolExecutor(1, ctx, _init_worker, (config, want_diff, True, False,
                                                                 send_unchanged, gpu))

        pools = [pool(g) for g in self.gpus]
        try:
            queue = iter(sources)
            running: dict[cf.Future[Any], tuple[int, Source]] = {}
            for i in range(len(pools)):
                src = next(queue, None)
                if src is not None:
                    running[pools[i].submit(_work_chunk, [src.path])] = (i, src)
            while running:
                done, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    i, src = running.pop(fut)
                    try:
                        res = fut.result()[0]
                    except BrokenProcessPool:
                        pools[i].shutdown(wait=False)
                        pools[i] = pool(self.gpus[i])
                        res = FileResult(src.path, ERROR, f"{shown(src.path)}: the worker on GPU "
                                         f"{self.gpus[i]} died while optimizing this file")
                    on_result(src, res)
                    nxt = next(queue, None)
                    if nxt is not None:
                        running[pools[i].submit(_work_chunk, [nxt.path])] = (i, nxt)
        finally:
            for p in pools:
                end_pool(p)


def _drain(tasks: dict[Any, list[str]], gates: _GatePools | None,
           deliver: Callable[[FileResult], None], on_result: OnResult,
           by_path: dict[str, Source]) -> list[str]:
    """Hand on results as chunks (and gate jobs) finish; returns the paths not finished
    when the pool broke (in submission order), or [] when every chunk finished."""
    import concurrent.futures as cf
    from concurrent.futures.process import BrokenProcessPool

    order = list(tasks)
    pending = set(tasks)
    while pending or (gates is not None and gates.busy):
        waiting = pending | (set(gates.busy) if gates is not None else set())
        done, _ = cf.wait(waiting, return_when=cf.FIRST_COMPLETED)
        for fut in done:
            if gates is not None and fut in gates.busy:
                res = gates.finish(fut)
                on_result(by_path[res.path], res)
                continue
            pending.discard(fut)
            try:
                results = fut.result()
            except BrokenProcessPool:
                return _after_break(order, tasks, deliver)
            del tasks[fut]
            for res in results:
                deliver(res)
        if not pending:
            break
    return []


def _after_break(order: list[Any], tasks: dict[Any, list[str]],
                 deliver: Callable[[FileResult], None]) -> list[str]:
    """Deliver the chunks that finished before the pool broke; return the others' paths."""
    left: list[str] = []
    for fut in order:
        if fut not in tasks:
            continue
        if fut.done() and not fut.cancelled() and fut.exception() is None:
            for res in fut.result():
                deliver(res)
        else:
            left += tasks[fut]
    return left


class _GatePools:
    """One single-process pool per GPU (``CUDA_VISIBLE_DEVICES`` set to it), one gate job at
    a time on each, the rest waiting on the driver: a gate worker that dies costs the one
    file it was gating, and is replaced."""

    def __init__(self, ctx: Any, config: BatchConfig, gpus: list[str],
                 send_unchanged: bool) -> None:
        from collections import deque

        self.ctx, self.config, self.gpus = ctx, config, gpus
        self.send_unchanged = send_unchanged
        self.pools = [self._pool(g) for g in gpus]
        self.busy: dict[Any, tuple[int, FileResult]] = {}
        self.waiting: deque[FileResult] = deque()

    def _pool(self, gpu: str) -> Any:
        import concurrent.futures as cf

        return cf.ProcessPoolExecutor(1, self.ctx, _init_worker,
                                      (self.config, False, False, False, False, gpu))

    def submit(self, res: FileResult) -> None:
        self.waiting.append(res)
        self._fill()

    def _fill(self) -> None:
        taken = {i for i, _ in self.busy.values()}
        for i in range(len(self.pools)):
            if i in taken or not self.waiting:
                continue
            res = self.waiting.popleft()
            fut = self.pools[i].submit(_gate_job, self.config, res, self.send_unchanged)
            self.busy[fut] = (i, res)

    def finish(self, fut: Any) -> FileResult:
        from concurrent.futures.process import BrokenProcessPool

        i, res = self.busy.pop(fut)
        try:
            out: FileResult = fut.result()
        except BrokenProcessPool:
            self.pools[i].shutdown(wait=False)
            self.pools[i] = self._pool(self.gpus[i])
            original = res.original or b""
            res.original = None
            res.status, res.diff = GATE_FAILED, ""
            res.reason = (f"{res.path}: the gate worker on GPU {self.gpus[i]} died while "
                          "gating this file")
            _settle(res, original, self.send_unchanged)
            out = res
        self._fill()
        return out

    def close(self, cancel: bool) -> None:
        for p in self.pools:
            if cancel:
                end_pool(p)
            else:
                p.shutdown(wait=True)


MAX_CHUNK = 32


def chunks(paths: list[str], jobs: int, isolate: bool = False) -> list[list[str]]:
    """Paths cut into tasks, guided self-scheduling: each chunk a quarter of a worker's
    share of what is left (at most ``MAX_CHUNK`` files), so that early chunks make the
    per-task cost vanish, results stream back, and the last ones are single files that
    leave no worker idle at the end. ``isolate``: one file per task."""
    out: list[list[str]] = []
    i = 0
    while i < len(paths):
        left = len(paths) - i
        size = 1 if isolate else max(1, min(MAX_CHUNK, left // (jobs * 4)))
        out.append(paths[i:i + size])
        i += size
    return out

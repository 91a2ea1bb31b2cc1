"""The command's process settings: Ctrl-C in a command that runs worker processes (``klc
batch``), and the collector's thresholds (``tune_gc``) for the command and its workers.

The first Ctrl-C raises KeyboardInterrupt in the main thread as usual: the driver stops
handing out work, ends its workers (they hold nothing that must be saved: the driver alone
writes), writes what has arrived and closes its journal. A second Ctrl-C while that cleanup
runs is counted, not raised: a KeyboardInterrupt raised inside a process pool's shutdown left
the pool's manager thread waiting forever on a pipe, and the interpreter waiting on that thread
at exit (a double Ctrl-C hung the batch). A third ends the process at once, exit 130, after
killing the workers: every file is still either as it was or completely written (writes are
atomic, and the journal tolerates a torn line), as after ``kill -9``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

HARD_EXIT_AFTER = 3  # Ctrl-C presses: the third ends the process at once
_presses = 0
_holding = 0  # ``held_off`` blocks in force
_held = False  # a first Ctrl-C came inside one: raised when the outermost ends


def interrupted() -> bool:
    """Whether a Ctrl-C came while ``sigint_guard`` was in force (the last time)."""
    return _presses > 0


def _kill_children() -> None:
    import multiprocessing

    for child in multiprocessing.active_children():
        with contextlib.suppress(OSError, AttributeError, ValueError):
            child.kill()


def _handler(signum: int, frame: Any) -> None:
    global _presses, _held
    _presses += 1
    if _presses == 1:
        if _holding:
            _held = True
            return
        raise KeyboardInterrupt
    if _presses >= HARD_EXIT_AFTER:
        _kill_children()
        with contextlib.suppress(Exception):
            sys.stderr.write("klc: interrupted three times: stopped at once; every file is as "
                             "it was or completely written\n")
            sys.stderr.flush()
        os._exit(130)


@contextlib.contextmanager
def sigint_guard(ending: bool = False) -> Iterator[None]:
    """Install the handler above for the duration (main thread, default handler only; in any
    other case nothing changes), then put back the one that was there. ``ending``: the
    process ends after this block (the command line), so after a Ctrl-C, further ones are
    ignored rather than raised while it says so and exits."""
    global _presses
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    _presses = 0
    signal.signal(signal.SIGINT, _handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN if ending and _presses
                      else signal.default_int_handler)
        _presses = 0


@contextlib.contextmanager
def held_off() -> Iterator[None]:
    """A block that a first Ctrl-C does not cut (while ``sigint_guard`` is in force): its
    KeyboardInterrupt is raised when the block ends, so that what the block starts is whole
    (a progress display half started cannot be stopped: its stop undoes steps that never
    ran). Elsewhere, a plain block."""
    global _holding, _held
    if signal.getsignal(signal.SIGINT) is not _handler:
        yield
        return
    _holding += 1
    try:
        yield
    finally:
        _holding -= 1
        if not _holding and _held:
            _held = False
            raise KeyboardInterrupt


def end_pool(pool: Any, cancel: bool = True) -> None:
    """Shut a ``concurrent.futures.ProcessPoolExecutor`` down without waiting for its work;
    after a Ctrl-C its worker processes are killed first and its manager thread joined, so
    that nothing is left for the interpreter to wait on at exit."""
    if not interrupted():
        pool.shutdown(wait=False, cancel_futures=cancel)
        return
    processes = getattr(pool, "_processes", None) or {}
    # (taken before the shutdown, which lets go of it: a manager thread still closing its
    # pipes at exit races the interpreter's wake-up call to it, "Bad file descriptor")
    manager = getattr(pool, "_executor_manager_thread", None)
    for proc in list(processes.values()):
        with contextlib.suppress(OSError, AttributeError, ValueError):
            proc.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    if manager is not None and manager.is_alive():
        manager.join(timeout=10)


def die_with_parent() -> None:
    """Ask Linux to kill this process (a worker) when the one that started it dies, however
    it dies (a SIGTERM or SIGKILL to the driver leaves no orphan workers computing on);
    elsewhere a no-op. The request follows the thread that forked this process: a pool's
    workers are started from the driver's main thread."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def tune_gc() -> None:
    """Fewer cyclic-GC passes: a parsed unit allocates tens of thousands of short-lived
    objects that reference counting frees, and the default gen-0 threshold (700) makes the
    collector rescan the loaded libraries many times per file (about a third of `klc list`'s
    time). The libraries are frozen out of the scans and the threshold raised."""
    import gc

    gc.freeze()
    gc.set_threshold(50_000, 20, 100)

"""``klc.interrupts`` in the process that runs the tests: the Ctrl-C handler of a command that
runs worker processes, the block a first Ctrl-C does not cut, and a pool ended after one.
Real signals, sent to this process (its main thread)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import pytest

from klc.interrupts import end_pool, held_off, interrupted, sigint_guard


def _ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.05)  # (the handler runs in the main thread, at its next instruction)


@pytest.fixture(autouse=True)
def _default_handler() -> Iterator[None]:
    """Ctrl-C's handler as a command at a terminal has it (a test run started in the
    background inherits SIGINT ignored), put back afterwards."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_ctrl_c_inside_held_off_is_raised_when_the_block_ends() -> None:
    steps = []
    with sigint_guard(), pytest.raises(KeyboardInterrupt):
        with held_off():
            _ctrl_c()
            steps.append("after the Ctrl-C")
            with held_off():  # (nested: raised when the outermost ends)
                steps.append("inner")
            steps.append("the end of the block")
        steps.append("not reached")
    assert steps == ["after the Ctrl-C", "inner", "the end of the block"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_held_off_without_the_guard_is_a_plain_block() -> None:
    with pytest.raises(KeyboardInterrupt), held_off():
        _ctrl_c()
        pytest.fail("the Ctrl-C was held off without the guard")


def test_a_second_ctrl_c_is_counted_not_raised() -> None:
    with sigint_guard():
        with pytest.raises(KeyboardInterrupt):
            _ctrl_c()
        _ctrl_c()  # (would raise here, in the cleanup of the first)
        assert interrupted()
    assert not interrupted()


def test_a_pool_ended_after_a_ctrl_c_has_no_worker_and_no_manager_thread_left() -> None:
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"))
    pool.submit(len, ()).result()
    manager = pool._executor_manager_thread  # type: ignore[attr-defined]
    workers = list(pool._processes.values())  # type: ignore[union-attr]
    assert manager is not None and manager.is_alive() and workers
    with sigint_guard():
        with pytest.raises(KeyboardInterrupt):
            _ctrl_c()
        end_pool(pool)
    assert not manager.is_alive()  # (joined: nothing left for the interpreter's exit to wake)
    for w in workers:
        w.join(timeout=10)
        assert not w.is_alive()

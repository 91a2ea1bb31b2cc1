"""Shared pytest set-up. The rule loader's vocabulary is installed first, as every entry point
of klc does (``klc.plugins.load``). Tests marked ``gpu`` need an NVIDIA GPU: on a machine
without one (CI, a laptop) they are skipped with that reason instead of failing. The batch's
compile check runs with NVRTC (``KLC_NVCC=none``, for the tests and the commands they start):
nvcc, where installed, compiles each file whole and takes seconds a file;
tests/batch/test_batch_nvcc.py turns it on."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import NamedTuple

import pytest

from klc import plugins

os.environ.setdefault("KLC_NVCC", "none")


def pytest_configure(config: pytest.Config) -> None:
    plugins.load()


@functools.cache
def _gpu_count() -> int:
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no driver, no library, no device: all mean "no GPU" here
        return 0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if any("gpu" in item.keywords for item in items) and _gpu_count() == 0:
        skip = pytest.mark.skip(reason="needs an NVIDIA GPU")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def _byte_limit_of_the_test_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """klc's command line puts ``--max-bytes`` into the environment (its worker processes
    read it there): a test that gives it must not set the limit of the tests after it."""
    monkeypatch.delenv("KLC_MAX_BYTES", raising=False)


class Proc(NamedTuple):
    pid: int
    ppid: int
    state: str  # ``Z``: a zombie, which has ended
    cmdline: tuple[bytes, ...]


def _processes() -> list[Proc]:
    """Every process of the machine as /proc tells it (``ps`` cuts its lines at $COLUMNS,
    which may drop a script's path); one that ends while it is read is left out."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = tuple((proc / "cmdline").read_bytes().split(b"\0"))
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        # the state and the parent pid follow the command name, which may hold spaces
        fields = stat.rpartition(")")[2].split()
        found.append(Proc(int(proc.name), int(fields[1]), fields[0], cmdline))
    return found


@pytest.fixture
def processes() -> functools.partial[list[Proc]]:
    """A call that lists the machine's processes (pid, parent, state, command line) now:
    for tests that a command's children end with it (Linux)."""
    return functools.partial(_processes)

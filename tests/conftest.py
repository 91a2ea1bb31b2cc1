"""Shared pytest set-up. The rule loader's vocabulary is installed first, as every entry point
of klc does (``klc.plugins.load``). Tests marked ``gpu`` need an NVIDIA GPU: on a machine
without one (CI, a laptop) they are skipped with that reason instead of failing. The batch's
compile check runs with NVRTC (``KLC_NVCC=none``, for the tests and the commands they start):
nvcc, where installed, compiles each file whole and takes seconds a file;
tests/batch/test_batch_nvcc.py turns it on."""

from __future__ import annotations

import functools
import os

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

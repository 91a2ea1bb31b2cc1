"""The batch tests compile-check with NVRTC (KLC_NVCC=none): nvcc, where installed, compiles
each file whole and takes seconds a file; tests/batch/test_batch_nvcc.py turns it on."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _nvrtc_compile_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLC_NVCC", "none")

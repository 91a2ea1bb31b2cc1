"""The batch's compile check: nvcc where installed (the whole translation unit, host code and
the project's headers, with -I/-D), NVRTC otherwise (KLC_NVCC=none turns nvcc off); each file
says which compiler ran."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KLC = [sys.executable, "-m", "klc"]
BREAK = ('rule break_exp {\n  kind: skill\n  context: global\n  anchor: ```\n    expf($X)\n'
         "  ```\n  rewrite replace: ```\n    no_such_fn($X)\n  ```\n}\n")


def _run(*args: str, nvcc: str | None, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("KLC_BUILD_FLAGS", None)
    if nvcc is None:
        env["KLC_NVCC"] = "none"
    else:
        env.pop("KLC_NVCC", None)
    # (in the test's folder: an --in-place batch keeps its journal in the working folder)
    return subprocess.run([*KLC, *args], capture_output=True, text=True, cwd=cwd, timeout=600,
                          env=env)


def _tree(tmp_path: Path) -> Path:
    """A kernel whose project header has host code NVRTC cannot compile (a timer)."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "timer.h").write_text(
        "#pragma once\n#include <sys/time.h>\n"
        "inline double seconds() { timeval t; gettimeofday(&t, nullptr); "
        "return t.tv_sec + 1e-6 * t.tv_usec; }\n#define SCALE 2.0f\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "act.cu").write_text(
        '#include "timer.h"\n#include <math.h>\n'
        "__global__ void act(float *out, const float *in, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) out[i] = SCALE * expf(in[i]);\n}\n"
        "int main() { double t = seconds(); return t < 0; }\n")
    (tmp_path / "broken.rule").write_text(BREAK)
    return tmp_path


def test_nvrtc_fallback_names_itself(tmp_path: Path) -> None:
    t = _tree(tmp_path)
    before = (t / "src" / "act.cu").read_bytes()
    r = _run("batch", str(t / "src"), "--rule", str(t / "broken.rule"), "--in-place", "-j", "1",
             "-I", str(t / "inc"), "--report", str(t / "r.json"), nvcc=None, cwd=t)
    assert r.returncode == 0, r.stderr
    assert "compile-checked with NVRTC" in _notes(t / "r.json")
    assert "does not compile where the original does (both compiled with NVRTC" in r.stderr
    assert (t / "src" / "act.cu").read_bytes() == before


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc on PATH")
def test_nvcc_compiles_the_whole_unit_with_the_include_path(tmp_path: Path) -> None:
    t = _tree(tmp_path)
    before = (t / "src" / "act.cu").read_bytes()
    r = _run("batch", str(t / "src"), "--rule", str(t / "broken.rule"), "--in-place", "-j", "1",
             "-I", str(t / "inc"), "--report", str(t / "r.json"), nvcc="nvcc", cwd=t)
    assert r.returncode == 0, r.stderr
    assert "compile-checked with nvcc " in _notes(t / "r.json")
    assert "does not compile where the original does (both compiled with nvcc" in r.stderr
    assert 'identifier "no_such_fn" is undefined' in r.stderr
    assert (t / "src" / "act.cu").read_bytes() == before
    # without -I the original does not compile either: nothing to compare, said so
    r = _run("batch", str(t / "src"), "--rule", str(t / "broken.rule"), "--in-place", "-j", "1",
             "--report", str(t / "r2.json"), nvcc="nvcc", cwd=t)
    assert r.returncode == 0, r.stderr
    assert "not compile-checked: the original does not compile with nvcc" in \
        _notes(t / "r2.json")
    assert b"no_such_fn" in (t / "src" / "act.cu").read_bytes()  # kept, unchecked, as before


def _notes(report: Path) -> str:
    doc = json.loads(report.read_text())
    return "\n".join(n for f in doc["files"] for n in f["notes"])

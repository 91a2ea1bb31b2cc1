"""Hostile and careless input (issue 21): every case ends in a clear one-line message with
the file's name and exit status 2 (or 0/1 where that is the answer), never a traceback, a
hang or a write outside its place. Real processes and signals where the case is about them."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from klc import batch as kb

ROOT = Path(__file__).parent.parent
KLC = [sys.executable, "-c", "import sys; from klc.cli import main; sys.exit(main())"]
FAST_MATH = str(ROOT / "skills" / "fast_math.rule")
SIGMOID = (ROOT / "bench" / "examples" / "sigmoid.cu").read_bytes()


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))


def tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


# -- 1. Ctrl-C twice ----------------------------------------------------------------------


def _wait_for(path: Path, lines: int, proc: subprocess.Popen[bytes], limit: float) -> None:
    end = time.monotonic() + limit
    while time.monotonic() < end and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= lines:
            return
        time.sleep(0.01)


@pytest.mark.parametrize("when", ["starting", "running"])
def test_two_ctrl_c_end_the_batch_and_its_workers(tmp_path: Path, when: str) -> None:
    """SIGINT to the whole process group twice, 20 ms apart (a double Ctrl-C at a terminal):
    the batch ends with status 130, no traceback, no worker left, every file whole. (It used
    to hang: the second KeyboardInterrupt broke a pool's shutdown, leaving its manager thread
    waiting on a pipe.)"""
    src = tree(tmp_path / "in", {f"d{i % 4}/k{i}.cu": SIGMOID for i in range(240)})
    out = tmp_path / "out"
    proc = subprocess.Popen([*KLC, "batch", str(src), "--rule", FAST_MATH, "--out", str(out),
                             "-j", "2"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    # "starting": the journal's header is written, the workers are being started
    _wait_for(out / kb.JOURNAL_NAME, 10 if when == "running" else 1, proc, 60)
    assert proc.poll() is None, "the batch ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the batch hung after two Ctrl-C")
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err and b"Exception ignored" not in err, err.decode()
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):  # no worker of the group is left
        os.killpg(proc.pid, 0)
    fast = SIGMOID.replace(b"expf(", b"__expf(")
    for rel, data in files_under(out).items():
        if rel.endswith(".cu"):
            assert data in (SIGMOID, fast), rel

"""Instruction counts of parts of a Python process, by valgrind's callgrind: the figure that
does not move with the machine's load (bench/parse_bench.py and bench/list_bench.py
``--count``). The process runs each part to count through ``sys.call_tracing`` (a plain
call), whose C function callgrind is told to count in and to write a count after: one count
per such call, nothing else counted."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MARK = "_PyEval_CallTracing"
_TOTALS_RE = re.compile(r"^totals:\s*(\d+)", re.M)


def count_calls(argv: list[str], calls: int, who: str) -> tuple[list[int], str] | None:
    """Run ``python ARGV`` under callgrind and return the instruction count of each of its
    ``calls`` calls through ``sys.call_tracing``, in order, and what it printed; None (and a
    message on stderr naming ``who``) when valgrind is missing or the run gave no count per
    call."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print(f"{who}: --count needs valgrind (not found on PATH)", file=sys.stderr)
        return None
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run(
            [valgrind, "--tool=callgrind", "--collect-atstart=no", f"--toggle-collect={MARK}",
             f"--dump-after={MARK}", f"--callgrind-out-file={Path(tmp) / 'callgrind.out'}",
             sys.executable, *argv],
            capture_output=True, text=True, check=False,
            env=dict(os.environ, PYTHONHASHSEED="0"))  # the same sets and dicts every time
        dumps = sorted(Path(tmp).glob("callgrind.out.*"), key=lambda p: int(p.suffix[1:]))
        counts = [int(m.group(1)) for p in dumps
                  if (m := _TOTALS_RE.search(p.read_text(errors="replace")))]
    if run.returncode or len(counts) != calls or not all(counts):
        print(f"{who}: the run under valgrind gave no count per call (a Python without the "
              f"symbol {MARK}?):\n{run.stdout[-1000:]}{run.stderr[-2000:]}", file=sys.stderr)
        return None
    return counts, run.stdout


_SUMMARY_RE = re.compile(r"^(?:summary|totals):\s*(\d+)", re.M)


def count_command(cmd: list[str], who: str, env: dict[str, str] | None = None,
                  cwd: str | Path | None = None, ok: tuple[int, ...] = (0,)) -> int | None:
    """The instructions a whole command runs (every instruction of the process, under
    callgrind), or None (and a message naming ``who``) when valgrind is missing or the
    command failed (an exit status not in ``ok``)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print(f"{who}: --count needs valgrind (not found on PATH)", file=sys.stderr)
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        run = subprocess.run([valgrind, "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             check=False, env=env, cwd=cwd)
        m = _SUMMARY_RE.search(out.read_text(errors="replace")) if out.exists() else None
    if run.returncode not in ok or m is None:
        print(f"{who}: {cmd[0]} under valgrind failed ({run.returncode}):\n"
              f"{run.stderr[-2000:]}", file=sys.stderr)
        return None
    return int(m.group(1))

"""The isolated side of the gate: verify and profile run in a child process with a timeout.

A candidate kernel can fault (an illegal address, a trap), which leaves the CUDA context
unusable, or loop forever, which blocks the process in a synchronise. Neither may take the
gate, or a batch of gates, down with it. So the parent hands a job (plain JSON: cubin paths,
lowered names, launch geometry and data plan per case, all expressions already evaluated) to
a child process and waits with a timeout. Two ways to run that child:

- a persistent gate worker (``klc.gate.worker``, the default): one long-lived process per GPU
  serves many jobs over a pipe, keeping its CUDA context, loaded modules, the SOL figures and
  the reference's outputs (``Session``); it is retired after any job that leaves the device
  in doubt;
- one process per job (``run_isolated``: ``python -m klc.gate.child JOB RESULT PROGRESS``,
  ``KLC_GATE_ISOLATION=process``): nothing outlives the trial.

Both run the same ``JobRunner``: it reports a progress line before each step and its result
after each stage, so that when the child dies or is killed, the parent names the step it was
in and keeps what finished.

Run as a module, this file is the one-shot child; ``run_isolated`` is the parent's side.
The child's own parts: ``device`` (the GPU through CuPy), ``session`` (what a worker keeps
between jobs), ``runner`` (one job's stages).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from klc.fsutil import atomic_write
from klc.gate.runner import JobRunner
from klc.gate.session import Session

# --------------------------------------------------------------------------------------
# Parent side


@dataclass
class ProcessOutcome:
    """How a child process ended (or, for a worker that lives on, how its job ended)."""

    returncode: int | None
    timed_out: bool
    elapsed_s: float
    progress: str  # the last progress line the child wrote ("" if none)
    stderr_tail: str
    error: str = ""  # the child's own report of an unexpected error in the job

    def describe(self, timeout_s: float) -> str:
        step = f" during: {self.progress}" if self.progress else ""
        if self.timed_out:
            return (f"timed out after {timeout_s:g} s{step} (a kernel that never finishes, or "
                    "one far slower than the timeout allows); the child process was killed")
        if self.error:
            return f"the child process failed{step}: {self.error}"
        rc = self.returncode
        if rc is not None and rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = f"signal {-rc}"
            how = f"was killed by {name}"
        else:
            how = f"exited with status {rc}"
        tail = self.stderr_tail.strip().splitlines()[-3:]
        return f"the child process {how}{step}" + (
            f": {' | '.join(tail)}" if tail else "")


def run_process(argv: list[str], timeout_s: float, progress_path: Path,
                env: dict[str, str] | None = None) -> ProcessOutcome:
    """Run ``argv`` in a new process group; kill the whole group at the timeout."""
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True, env=env)
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        err.seek(0)
        tail = err.read()[-4000:].decode("utf-8", "replace")
    progress = ""
    with contextlib.suppress(OSError):
        lines = progress_path.read_text().splitlines()
        progress = lines[-1] if lines else ""
    return ProcessOutcome(proc.returncode, timed_out, time.monotonic() - t0, progress, tail)


@dataclass
class ChildOutcome:
    result: dict[str, Any]  # what the child reported (possibly partial), {} if nothing
    process: ProcessOutcome


def child_env() -> dict[str, str]:
    """The child's environment: this one, with klc importable from this checkout."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def run_isolated(job: dict[str, Any], timeout_s: float) -> ChildOutcome:
    """Run a gate job in a child process of its own (see the module doc)."""
    with tempfile.TemporaryDirectory(prefix="klc-gate-") as tmp:
        d = Path(tmp)
        job_path, result_path, progress_path = d / "job.json", d / "result.json", d / "progress"
        job_path.write_text(json.dumps(job))
        outcome = run_process([sys.executable, "-m", "klc.gate.child", str(job_path),
                               str(result_path), str(progress_path)], timeout_s,
                              progress_path, child_env())
        result: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            result = json.loads(result_path.read_text())
    return ChildOutcome(result, outcome)




# --------------------------------------------------------------------------------------
# The one-shot child


def main(argv: list[str]) -> int:
    job_path, result_path, progress_path = (Path(p) for p in argv)
    job = json.loads(job_path.read_text())
    progress = progress_path.open("a", buffering=1)

    def step(text: str) -> None:
        progress.write(text + "\n")
        progress.flush()

    def save(result: dict[str, Any]) -> None:
        atomic_write(result_path, json.dumps(result).encode())

    JobRunner(Session(), job, step, save).run()
    step("done")
    # skip interpreter teardown: after a fault the CUDA context is broken, and freeing memory
    # in it at exit can hang; everything the parent needs is already in the result file
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

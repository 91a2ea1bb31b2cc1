"""The isolated worker: verify and profile run in a child process with a timeout.

A candidate kernel can fault (an illegal address, a trap), which leaves the CUDA context
unusable, or loop forever, which blocks the process in a synchronise. Neither may take the
gate, or a batch of gates, down with it. So the parent writes a job (plain JSON: cubin paths,
lowered names, launch geometry and data plan per case, all expressions already evaluated),
starts ``python -m klc.gate.child JOB RESULT PROGRESS`` in its own process group, and waits
with a timeout. The child writes a progress line before each step and its result file after
each stage; when it dies or is killed, the parent names the step it was in.

Run as a module, this file is the child; ``run_isolated`` is the parent's side.
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

# --------------------------------------------------------------------------------------
# Parent side


@dataclass
class ProcessOutcome:
    """How a child process ended."""

    returncode: int | None
    timed_out: bool
    elapsed_s: float
    progress: str  # the last progress line the child wrote ("" if none)
    stderr_tail: str

    def describe(self, timeout_s: float) -> str:
        step = f" during: {self.progress}" if self.progress else ""
        if self.timed_out:
            return (f"timed out after {timeout_s:g} s{step} (a kernel that never finishes, or "
                    "one far slower than the timeout allows); the child process was killed")
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
    result: dict[str, Any]  # what the child wrote (possibly partial), {} if nothing
    process: ProcessOutcome


def run_isolated(job: dict[str, Any], timeout_s: float) -> ChildOutcome:
    """Run a gate job in a child process (see the module doc)."""
    with tempfile.TemporaryDirectory(prefix="klc-gate-") as tmp:
        d = Path(tmp)
        job_path, result_path, progress_path = d / "job.json", d / "result.json", d / "progress"
        job_path.write_text(json.dumps(job))
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"]
                                    if env.get("PYTHONPATH") else "")
        env.setdefault("PYTHONUNBUFFERED", "1")
        outcome = run_process([sys.executable, "-m", "klc.gate.child", str(job_path),
                               str(result_path), str(progress_path)], timeout_s,
                              progress_path, env)
        result: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            result = json.loads(result_path.read_text())
    return ChildOutcome(result, outcome)


# --------------------------------------------------------------------------------------
# Child side


class _Failed(Exception):
    """A stage failed; the message is the reason. Ends the child's work."""


class _Worker:
    def __init__(self, job: dict[str, Any], result_path: Path, progress_path: Path):
        self.job = job
        self.result_path = result_path
        self.progress = progress_path.open("a", buffering=1)
        self.result: dict[str, Any] = {"stages": {}}

    def step(self, text: str) -> None:
        self.progress.write(text + "\n")
        self.progress.flush()

    def save(self) -> None:
        tmp = self.result_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.result))
        os.replace(tmp, self.result_path)

    def run(self) -> None:
        import cupy as cp

        from klc.gate import sol

        self.step("starting CUDA")
        device = sol.device_info()
        self.result["device"] = device
        self.save()
        self.functions = self.load_functions(cp)
        for stage in self.job["stages"]:
            self.result["stages"][stage] = {"status": "running"}
            try:
                data = self.verify() if stage == "verify" else self.profile(device)
            except _Failed as e:
                self.result["stages"][stage] = {**self.result["stages"][stage],
                                                "status": "failed", "reason": str(e)}
                self.save()
                return
            except (cp.cuda.runtime.CUDARuntimeError, cp.cuda.driver.CUDADriverError) as e:
                where = getattr(self, "_where", "")
                self.result["stages"][stage] = {
                    **self.result["stages"][stage], "status": "failed",
                    "reason": f"CUDA error{where}: {e} (the kernel faulted: an illegal address, "
                              "a trap or a misaligned access)"}
                self.save()
                return
            self.result["stages"][stage] = {"status": "passed", **data}
            self.save()

    def load_functions(self, cp: Any) -> dict[str, Any]:
        fns = {}
        for role, k in self.job["kernels"].items():
            self.step(f"loading {role} module")
            try:
                mod = cp.RawModule(path=k["cubin"])
                fn = mod.get_function(k["lowered"])
            except (cp.cuda.driver.CUDADriverError, cp.cuda.runtime.CUDARuntimeError) as e:
                raise SystemExit(self.fail_all(f"cannot load the {role} module: {e}")) from None
            smem = max(c["launch"][role]["shared"] for c in self.all_cases())
            if smem > 48 * 1024:
                fn.max_dynamic_shared_size_bytes = smem
            fns[role] = (mod, fn)
        return fns

    def fail_all(self, reason: str) -> int:
        for stage in self.job["stages"]:
            self.result["stages"][stage] = {"status": "failed", "reason": reason}
        self.save()
        return 0

    def all_cases(self) -> list[dict[str, Any]]:
        cases = list(self.job.get("verify_cases", []))
        if self.job.get("profile_case"):
            cases.append(self.job["profile_case"])
        return cases

    def check_launch(self, role: str, case: dict[str, Any], device: dict[str, Any]) -> None:
        cfg = case["launch"][role]
        grid, block, shared = cfg["grid"], cfg["block"], cfg["shared"]
        threads = block[0] * block[1] * block[2]
        if min(grid) < 1 or min(block) < 1:
            raise _Failed(f"{role} launch {case['label']}: grid {grid} / block {block} has a "
                          "zero or negative dimension")
        if threads > device["max_threads_per_block"]:
            raise _Failed(f"{role} launch {case['label']}: block {block} has {threads} threads, "
                          f"the device allows {device['max_threads_per_block']}")
        for i in range(3):
            if grid[i] > device["max_grid"][i] or block[i] > device["max_block"][i]:
                raise _Failed(f"{role} launch {case['label']}: grid {grid} / block {block} "
                              f"exceeds the device's limits in dimension {'xyz'[i]}")
        if shared > device["max_smem_per_block_optin"]:
            raise _Failed(f"{role} launch {case['label']}: {shared} bytes of dynamic shared "
                          f"memory, the device allows {device['max_smem_per_block_optin']}")

    # -- verify -------------------------------------------------------------------------

    def host_data(self, case: dict[str, Any], seed: int) -> dict[str, Any]:
        import numpy as np

        from klc.gate.verify import make_data, make_scalar, storage_dtype

        rng = np.random.default_rng(seed)
        host: dict[str, Any] = {}
        for a in self.job["args"]:
            c = case["args"][a["name"]]
            if a["kind"] == "scalar":
                if c.get("value") is not None:
                    host[a["name"]] = storage_dtype(a["dtype"]).type(c["value"])
                else:
                    host[a["name"]] = make_scalar(c["init"], a["dtype"], rng)
            elif a["role"] != "out":
                host[a["name"]] = make_data(c["init"], c["elements"], a["dtype"], rng)
        return host

    def plan(self, case: dict[str, Any]) -> list[dict[str, Any]]:
        return [{**a, "elements": case["args"][a["name"]].get("elements", 0)}
                for a in self.job["args"]]

    def verify(self) -> dict[str, Any]:
        from klc.gate.verify import compare, run_kernel

        device = self.result["device"]
        same = self.job["same_kernel"]
        checked = []
        for case in self.job["verify_cases"]:
            for role in self.job["kernels"]:
                self.check_launch(role, case, device)
            host = self.host_data(case, case["seed"])
            plan = self.plan(case)
            outputs = {}
            for role in ("reference", "candidate"):
                self._where = f" in the {role} run, verify {case['label']}"
                self.step(f"verify {case['label']}: {role} run")
                fn = self.functions["candidate" if same else role][1]
                run = run_kernel(fn, case["launch"]["candidate" if same else role], plan, host,
                                 role if not same else
                                 ("the kernel" if role == "reference" else "the kernel (again)"))
                if run.problems:
                    raise _Failed(f"verify {case['label']}: {run.problems[0]}")
                outputs[role] = run.buffers
            for a in self.job["args"]:
                if a["kind"] == "scalar" or a["role"] == "in":
                    continue
                ref = outputs["reference"][a["name"]]
                cand = outputs["candidate"][a["name"]]
                tol = tuple(self.job["tolerance"][a["name"]])
                # the reference must have written everything the spec says it writes
                bad_ref = _unwritten_in(ref, a["dtype"])
                if bad_ref is not None:
                    raise _Failed(f"verify {case['label']}: the reference left "
                                  f"{a['name']}[{bad_ref}] unwritten: the spec's shape for "
                                  f"{a['name']} is larger than what the kernel writes")
                m = compare(a["name"], cand, ref, a["dtype"], a["lanes"], tol,
                            who="candidate" if not same else "the second run")
                if m is not None:
                    why = "" if not same else (" (the kernel is not deterministic within "
                                               "tolerance: a race?)")
                    raise _Failed(f"verify {case['label']}: {m.describe()}{why}")
            checked.append(case["label"])
        return {"cases": checked, "seeds": sorted({c["seed"] for c in self.job["verify_cases"]})}

    # -- profile ------------------------------------------------------------------------

    def profile(self, device: dict[str, Any]) -> dict[str, Any]:
        import cupy as cp

        from klc.gate import sol
        from klc.gate.profile import l2_flusher, time_kernel
        from klc.gate.verify import launch, poison, storage_dtype

        case = self.job["profile_case"]
        self.step("measuring the device's ceilings (cached per device)")
        figures = sol.load_or_measure(device, self.job.get("peaks_cubin"))
        for role in self.job["kernels"]:
            self.check_launch(role, case, device)
        host = self.host_data(case, case["seed"])
        plan = self.plan(case)
        dev_args: list[Any] = []
        footprint = 0
        for a in plan:
            if a["kind"] == "scalar":
                dev_args.append(host[a["name"]])
                continue
            data = poison(a["elements"], a["dtype"]) if a["role"] == "out" else host[a["name"]]
            buf = cp.asarray(data.view(storage_dtype(a["dtype"])))
            footprint += buf.nbytes
            dev_args.append(buf)
        del host
        flush = l2_flusher(device["l2_bytes"], footprint)
        series: dict[str, Any] = {}
        order = ["candidate", "reference", "candidate"] if not self.job["same_kernel"] else \
            ["candidate", "candidate"]
        for role in order:
            label = role if role not in series else f"{role} (again)"
            self._where = f" in the {role} run, profile {case['label']}"
            self.step(f"profile {case['label']}: timing {label}")
            fn = self.functions[role][1]
            cfg = case["launch"][role]
            timing = time_kernel(lambda fn=fn, cfg=cfg: launch(fn, cfg, dev_args), flush=flush)
            series[label] = timing.to_json()
        cand = [series["candidate"], series["candidate (again)"]]
        median_ms = (cand[0]["median_ms"] + cand[1]["median_ms"]) / 2
        noise = abs(cand[0]["median_ms"] - cand[1]["median_ms"]) / min(
            cand[0]["median_ms"], cand[1]["median_ms"])
        floor = sol.floor_seconds(case["bytes"], case["flops"], figures, case["peak"])
        verdict = sol.judge(median_ms * 1e-3, floor)
        data: dict[str, Any] = {
            "label": case["label"], "series": series, "median_ms": median_ms, "noise": noise,
            "footprint_bytes": footprint, "l2_flushed": flush is not None,
            "sol": verdict, "figures": figures,
        }
        if "reference" in series:
            data["speedup"] = series["reference"]["median_ms"] / median_ms
        self.result["stages"]["profile"] = {"status": "running", **data}
        if verdict["impossible"]:
            raise _Failed(
                f"impossible time: {median_ms * 1e3:.1f} us is under "
                f"{sol.IMPOSSIBLE_FRACTION:g} x the speed-of-light floor "
                f"{floor['floor_s'] * 1e6:.1f} us ({verdict['pct_of_sol']:.0f}% of SOL for "
                f"{case['bytes']:.4g} bytes and {case['flops']:.4g} flops): the kernel does "
                "less work than the spec claims")
        return data


def _unwritten_in(a: Any, dtype: str) -> int | None:
    import numpy as np

    from klc.gate.verify import unwritten_mask

    idx = np.flatnonzero(unwritten_mask(a, dtype))
    return int(idx[0]) if idx.size else None


def main(argv: list[str]) -> int:
    job_path, result_path, progress_path = (Path(p) for p in argv)
    job = json.loads(job_path.read_text())
    worker = _Worker(job, result_path, progress_path)
    worker.run()
    worker.step("done")
    # skip interpreter teardown: after a fault the CUDA context is broken, and freeing memory
    # in it at exit can hang; everything the parent needs is already in the result file
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

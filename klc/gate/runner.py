"""Running one gate job in the child (``JobRunner``): load the modules, then verify (every
case, and at the profiling size where it fits) and profile, reporting a progress line before
each step and the result after each stage (``klc.gate.child`` says why)."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from klc.content import json_sha256
from klc.gate import sol
from klc.gate.profile import Budget, Series, drift, noise, run_rounds, summarize
from klc.gate.session import PROFILE_SIZE_MEMORY_FRACTION, Session
from klc.gate.verify import (
    CaseInputs,
    GuardedBuffers,
    HostDraw,
    RunOutput,
    compare,
    compare_in_place,
    fill_poison,
    make_scalar,
    make_values,
    storage_dtype,
    unwritten_after,
    unwritten_count,
    unwritten_mask,
)


class _Failed(Exception):
    """A stage failed; the message is the reason. ``retire`` says why the worker must not
    serve another job after this one ("" when the device is known to be fine)."""

    def __init__(self, message: str, retire: str = ""):
        super().__init__(message)
        self.retire = retire


class JobRunner:
    """Verify and profile one job (the parent planned it: see ``klc.gate._build_job``)."""

    def __init__(self, session: Session, job: dict[str, Any], step: Callable[[str], None],
                 save: Callable[[dict[str, Any]], None]):
        self.session = session
        self.job = job
        self.step = step
        self._save = save
        self.result: dict[str, Any] = {"stages": {}}
        self._where = ""

    def save(self) -> None:
        self._save(self.result)

    def run(self) -> str:
        """Run the job's stages; returns why the device can no longer be trusted ("" when
        it can: the worker may serve the next job)."""
        self.step("starting CUDA")
        device = self.session.start()
        self.dev = self.session.device
        self.result["device"] = device
        self.save()
        try:
            self.functions = self.load_functions()
        except _Failed as e:
            for stage in self.job["stages"]:
                self.result["stages"][stage] = {"status": "failed", "reason": str(e)}
            self.save()
            return e.retire
        for stage in self.job["stages"]:
            self.result["stages"][stage] = {"status": "running"}
            try:
                try:
                    data = self.verify() if stage == "verify" else self.profile(device)
                finally:
                    self.dev.sync()  # a fault not seen yet shows here, in this stage
                    self.dev.release()
            except self.dev.errors as e:
                self.result["stages"][stage] = {
                    **self.result["stages"][stage], "status": "failed",
                    "reason": f"CUDA error{self._where}: {e} (the kernel faulted: an illegal "
                              "address, a trap or a misaligned access)"}
                self.save()
                return f"CUDA error: {e}"
            except _Failed as e:
                self.result["stages"][stage] = {**self.result["stages"][stage],
                                                "status": "failed", "reason": str(e)}
                self.save()
                return e.retire
            self.result["stages"][stage] = {"status": "passed", **data}
            self.save()
        return ""

    def load_functions(self) -> dict[str, Any]:
        fns = {}
        for role, k in self.job["kernels"].items():
            self.step(f"loading {role} module")
            try:
                module, sha = self.session.module(k["cubin"])
                smem = max(c["launch"][role]["shared"] for c in self.all_cases())
                fn = self.dev.function(module, k["lowered"], smem)
            except self.dev.errors as e:
                raise _Failed(f"cannot load the {role} module: {e}",
                              retire=f"CUDA error: {e}") from None
            fns[role] = (fn, sha)
        return fns

    def all_cases(self) -> list[dict[str, Any]]:
        cases = list(self.job.get("verify_cases", []))
        for extra in ("profile_size_case", "profile_case"):
            if self.job.get(extra):
                cases.append(self.job[extra])
        return cases

    def role_of(self, role: str) -> str:
        """Which kernel plays ``role`` (without a reference, the candidate plays both)."""
        return "candidate" if self.job["same_kernel"] else role

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

    # -- inputs -------------------------------------------------------------------------

    def plan(self, case: dict[str, Any]) -> list[dict[str, Any]]:
        return [{**a, "elements": case["args"][a["name"]].get("elements", 0)}
                for a in self.job["args"]]

    def inputs(self, case: dict[str, Any], keep_host: bool) -> tuple[Any, str]:
        """The case's inputs, made on the device where cuRAND is there (else on the host
        and uploaded); scalars on the host. Same seed, same data, for both kernels."""
        seed = case["seed"]
        rng = np.random.default_rng(seed)
        draw = self.dev.draw(seed)
        where = "device" if draw is not None else "host"
        inputs = CaseInputs({}, {}, {})
        for a in self.job["args"]:
            c = case["args"][a["name"]]
            if a["kind"] == "scalar":
                if c.get("value") is not None:
                    inputs.scalars[a["name"]] = storage_dtype(a["dtype"]).type(c["value"])
                else:
                    inputs.scalars[a["name"]] = make_scalar(c["init"], a["dtype"], rng)
            elif a["role"] != "out":
                if draw is not None:
                    values = make_values(c["init"], c["elements"], a["dtype"], draw)
                    if keep_host and a["role"] == "in":
                        inputs.host[a["name"]] = self.dev.to_host(values)
                else:
                    host = make_values(c["init"], c["elements"], a["dtype"], HostDraw(rng))
                    values = self.dev.to_device(host)
                    if keep_host and a["role"] == "in":
                        inputs.host[a["name"]] = host
                inputs.device[a["name"]] = values
        return inputs, where

    # -- verify -------------------------------------------------------------------------

    def reference_key(self, case: dict[str, Any], where: str) -> str:
        """Everything the reference's outputs on a case depend on."""
        parts = {"module": self.functions["reference"][1],
                 "function": self.job["kernels"]["reference"]["lowered"],
                 "launch": case["launch"]["reference"], "args": self.job["args"],
                 "case": case["args"], "seed": case["seed"], "inputs": where}
        return json_sha256(parts)

    def verify(self) -> dict[str, Any]:
        device = self.result["device"]
        same = self.job["same_kernel"]
        written = [a for a in self.job["args"] if a["kind"] == "buffer" and a["role"] != "in"]
        checked: list[str] = []
        reused = 0
        where = "host"
        cases = self.job["verify_cases"]
        for _, group in itertools.groupby(cases, key=lambda c: json.dumps(c["sizes"])):
            group = list(group)
            bufs = GuardedBuffers(self.dev.xp, self.plan(group[0]))
            for case in group:
                for role in self.job["kernels"]:
                    self.check_launch(role, case, device)
                self.step(f"verify {case['label']}: making the inputs")
                inputs, where = self.inputs(case, keep_host=True)
                outputs: dict[str, dict[str, np.ndarray]] = {}
                unwritten: dict[str, dict[str, np.ndarray]] = {}
                key = None if same else self.reference_key(case, where)
                cached = self.session.outputs.get(key) if key else None
                if cached is not None:
                    outputs["reference"] = cached
                    reused += 1
                for role in ("reference", "candidate"):
                    if role in outputs:
                        continue
                    who = role if not same else \
                        ("the kernel" if role == "reference" else "the kernel (again)")
                    self._where = f" in the {role} run, verify {case['label']}"
                    self.step(f"verify {case['label']}: {role} run")
                    run, masks = self.run_twice(bufs, inputs, case, role, who)
                    outputs[role] = run.buffers
                    unwritten[role] = masks
                    if role == "reference":
                        self._check_reference_wrote(case, masks)
                        if key is not None:
                            self.session.outputs.put(
                                key, {a["name"]: run.buffers[a["name"]] for a in written})
                for a in written:
                    m = compare(a["name"], outputs["candidate"][a["name"]],
                                outputs["reference"][a["name"]], a["dtype"], a["lanes"],
                                tuple(self.job["tolerance"][a["name"]]),
                                who="candidate" if not same else "the second run",
                                unwritten=unwritten["candidate"].get(a["name"]))
                    if m is not None:
                        why = "" if not same else (" (the kernel is not deterministic within "
                                                   "tolerance: a race?)")
                        raise _Failed(f"verify {case['label']}: {m.describe()}{why}")
                checked.append(case["label"])
                del inputs, outputs
            del bufs
            self.dev.release()
        self._where = ""
        out = {"cases": checked, "seeds": sorted({c["seed"] for c in cases}),
               "inputs_made_on": where, "reference_outputs_reused": reused}
        large = self.job.get("profile_size_case")
        if large is not None:
            out["profile_size"] = self.verify_profile_size(large)
            self.dev.release()
        return out

    def run_twice(self, bufs: GuardedBuffers, inputs: CaseInputs, case: dict[str, Any],
                  role: str, who: str) -> tuple[RunOutput, dict[str, np.ndarray]]:
        """One run of ``role`` from poisoned outputs, and the elements of each ``out``
        buffer it left unwritten. An element still holding the poison may be one the
        kernel wrote with that value (an ``unsigned char`` 165): where any is, the kernel
        runs again from the second poison, and only the elements holding each run's poison
        are unwritten (``unwritten_after``). The first run's outputs are compared."""
        fn = self.functions[self.role_of(role)][0]
        outs = [a for a in self.job["args"] if a["kind"] == "buffer" and a["role"] == "out"]
        runs: list[RunOutput] = []
        for second in (False, True):
            args = bufs.load(inputs, second)
            self.dev.launch(fn, case["launch"][self.role_of(role)], args)
            self.dev.sync()
            run = bufs.read(self.dev.to_host, inputs, who)
            if run.problems:
                raise _Failed(f"verify {case['label']}: {run.problems[0]}",
                              retire=f"{who} wrote outside its outputs")
            runs.append(RunOutput({k: v.copy() for k, v in run.buffers.items()}, []))
            suspects = {a["name"]: unwritten_mask(runs[0].buffers[a["name"]], a["dtype"])
                        for a in outs}
            if second or not any(m.any() for m in suspects.values()):
                break
            self.step(f"verify {case['label']}: {role} run again, from the second poison")
        if len(runs) == 1:
            return runs[0], suspects
        return runs[0], {a["name"]: unwritten_after(runs[0].buffers[a["name"]],
                                                    runs[1].buffers[a["name"]], a["dtype"])
                         for a in outs}

    def verify_profile_size(self, case: dict[str, Any]) -> dict[str, Any]:
        """One seed at the profiling sizes, where the kernel is timed: the same checks as
        the small cases (poison, guard zones, inputs unchanged, tolerance), made on the
        device; only guard zones and the first bad element come to the host. The
        reference's outputs are kept on the device for the next trials (checksummed)."""
        t0 = time.perf_counter()
        xp = self.dev.xp
        same = self.job["same_kernel"]
        label = case["label"]
        info: dict[str, Any] = {"label": label, "seed": case["seed"]}
        for role in self.job["kernels"]:
            self.check_launch(role, case, self.result["device"])
        plan = self.plan(case)
        written = [a for a in self.job["args"] if a["kind"] == "buffer" and a["role"] != "in"]
        size = {a["name"]: a["elements"] * storage_dtype(a["dtype"]).itemsize
                for a in plan if a["kind"] == "buffer"}
        out_bytes = sum(size[a["name"]] for a in written)
        need = 2 * sum(size.values()) + out_bytes
        free = getattr(self.dev, "free_memory", lambda: None)()
        if free is not None and need > PROFILE_SIZE_MEMORY_FRACTION * free:
            return {**info, "skipped": f"needs {need / 2**30:.2f} GiB of device memory, "
                                       f"{free / 2**30:.2f} GiB are free"}
        phases: dict[str, float] = {}
        last = [time.perf_counter()]

        def phase(name: str) -> None:  # where the check's time goes (synchronised)
            self.dev.sync()
            now = time.perf_counter()
            phases[name] = phases.get(name, 0.0) + (now - last[0]) * 1e3
            last[0] = now

        self.step(f"verify {label}: making the inputs")
        inputs, where = self.inputs(case, keep_host=False)
        bufs = GuardedBuffers(xp, plan)
        phase("inputs_ms")
        key = None if same else self.reference_key(case, where)
        reference = self.session.device_outputs.get(xp, key) if key else None
        info["reference_outputs_reused"] = reference is not None
        phase("reference_lookup_ms")
        for role in ("reference", "candidate"):
            if role == "reference" and reference is not None:
                continue
            who = role if not same else \
                ("the kernel" if role == "reference" else "the kernel (again)")
            self._where = f" in the {role} run, verify {label}"
            self.step(f"verify {label}: {role} run")
            fn = self.functions[self.role_of(role)][0]

            def run(second: bool, fn: Any = fn, role: str = role, who: str = who,
                    bufs: GuardedBuffers = bufs, inputs: CaseInputs = inputs) -> None:
                args = bufs.load(inputs, second)
                phase("load_ms")
                self.dev.launch(fn, case["launch"][self.role_of(role)], args)
                self.dev.sync()
                phase(f"{role}_run_ms")
                problems = bufs.check_in_place(xp, self.dev.to_host, inputs, who)
                phase("guard_and_input_checks_ms")
                if problems:
                    raise _Failed(f"verify {label}: {problems[0]}",
                                  retire=f"{who} wrote outside its outputs")

            run(False)
            first = self._suspects(xp, bufs, written)
            if role == "reference":
                reference = {a["name"]: bufs.body(a["name"]).copy() for a in written}
            masks: dict[str, Any] = {}
            if first:  # the poison's value, or unwritten: a run from the second poison
                self.step(f"verify {label}: {role} run again, from the second poison")
                run(True)
                masks = {n: m & unwritten_mask(bufs.body(n), d, True)
                         for n, (m, d) in first.items()}
            if role == "reference":
                for name, mask in masks.items():
                    if bool(mask.any()):
                        raise _Failed(f"verify {label}: the reference left {name}"
                                      f"[{int(xp.argmax(mask))}] unwritten: the spec's shape "
                                      f"for {name} is larger than what the kernel writes")
                if key is not None:
                    info["reference_outputs_kept"] = self.session.device_outputs.put(
                        xp, key, reference)
                phase("reference_keep_ms")
                continue
            self.step(f"verify {label}: comparing on the device")
            for a in written:
                m = compare_in_place(xp, a["name"], bufs.body(a["name"]), reference[a["name"]],
                                     a["dtype"], a["lanes"],
                                     tuple(self.job["tolerance"][a["name"]]),
                                     who="candidate" if not same else "the second run",
                                     unwritten=masks.get(a["name"]))
                if m is not None:
                    why = "" if not same else (" (the kernel is not deterministic within "
                                               "tolerance: a race?)")
                    raise _Failed(f"verify {label}: {m.describe()}{why}")
            phase("compare_ms")
        self._where = ""
        del inputs, bufs, reference
        info.update(inputs_made_on=where, elapsed_ms=(time.perf_counter() - t0) * 1e3,
                    bytes=need, phases_ms={k: round(v, 2) for k, v in phases.items()})
        return info

    @staticmethod
    def _suspects(xp: Any, bufs: GuardedBuffers, written: list[dict[str, Any]]
                  ) -> dict[str, tuple[Any, str]]:
        """The ``out`` buffers with elements still holding the first poison after a run,
        each with the mask of those elements and its dtype (on the device)."""
        return {a["name"]: (unwritten_mask(bufs.body(a["name"]), a["dtype"]), a["dtype"])
                for a in written if a["role"] == "out"
                and unwritten_count(xp, bufs.body(a["name"]), a["dtype"])[0]}

    def _check_reference_wrote(self, case: dict[str, Any], unwritten: dict[str, np.ndarray]
                               ) -> None:
        """The reference must have written everything the spec says it writes."""
        for name, mask in unwritten.items():
            idx = np.flatnonzero(mask)
            bad, a = (int(idx[0]) if idx.size else None), {"name": name}
            if bad is not None:
                raise _Failed(f"verify {case['label']}: the reference left {a['name']}[{bad}] "
                              f"unwritten: the spec's shape for {a['name']} is larger than "
                              "what the kernel writes")

    # -- profile ------------------------------------------------------------------------

    def profile(self, device: dict[str, Any]) -> dict[str, Any]:
        case = self.job["profile_case"]
        self.step("measuring the device's ceilings (cached per device)")
        figures = self.session.sol_figures(self.job.get("peaks_cubin"))
        for role in self.job["kernels"]:
            self.check_launch(role, case, device)
        self.step(f"profile {case['label']}: making the inputs")
        inputs, where = self.inputs(case, keep_host=False)
        dev_args: list[Any] = []
        footprint = 0
        for a in self.plan(case):
            if a["kind"] == "scalar":
                dev_args.append(inputs.scalars[a["name"]])
                continue
            if a["role"] == "out":
                buf = self.dev.xp.empty(a["elements"], dtype=storage_dtype(a["dtype"]))
                fill_poison(buf, a["dtype"])
            else:
                buf = inputs.device[a["name"]]
            footprint += buf.nbytes
            dev_args.append(buf)
        del inputs
        flush = self.dev.flusher(device["l2_bytes"], footprint)
        budget = Budget.from_json(self.job.get("budget"))
        same = self.job["same_kernel"]
        cached = None if same else self.job.get("reference_timing")
        labels = {"candidate": "candidate", "reference": "reference",
                  "candidate (again)": "candidate"}
        series = [Series("candidate")]
        if not same:
            series.append(Series("reference", mode="check" if cached else "full"))
        series.append(Series("candidate (again)"))
        calls = {}
        for label, role in labels.items():
            if not same or role == "candidate":
                fn, cfg = self.functions[role][0], case["launch"][role]
                calls[label] = (lambda fn=fn, cfg=cfg: self.dev.launch(fn, cfg, dev_args))
        checks: dict[str, Any] = {}

        def judge_check(s: Series) -> bool:
            rel, tol = drift(cached, s.times)  # type: ignore[arg-type]
            checks.update(check_median_ms=summarize(s.times, flush is not None).median_ms,
                          check_runs=len(s.times), drift=rel, drift_tolerance=tol)
            return abs(rel) > tol

        self._where = f" in the profile runs, {case['label']}"
        self.step(f"profile {case['label']}: timing {', '.join(s.label for s in series)} "
                  "in rounds")
        run_rounds(series, lambda ls: self.dev.time_calls([calls[x] for x in ls], flush),
                   budget, judge_check)
        self._where = ""
        timed = {s.label: summarize(s.times, flush is not None).to_json() for s in series}
        data: dict[str, Any] = {"label": case["label"], "series": {}}
        for s in series:
            if s.label == "reference" and s.mode == "checked":
                data["series"]["reference"] = {**cached, "cached": True, **checks}
            elif s.label == "reference":
                data["series"]["reference"] = {**timed["reference"], "cached": False, **checks}
            else:
                data["series"][s.label] = timed[s.label]
        a, b = timed["candidate"]["median_ms"], timed["candidate (again)"]["median_ms"]
        median_ms = (a + b) / 2
        floor = sol.floor_seconds(case["bytes"], case["flops"], figures, case["peak"])
        verdict = sol.judge(median_ms * 1e-3, floor)
        data.update({
            "median_ms": median_ms, "noise": noise(a, b), "footprint_bytes": footprint,
            "l2_flushed": flush is not None, "inputs_made_on": where,
            "budget": budget.to_json(), "interleaved": True, "sol": verdict,
            "figures": figures,
        })
        if "reference" in data["series"]:
            data["speedup"] = data["series"]["reference"]["median_ms"] / median_ms
        self.result["stages"]["profile"] = {"status": "running", **data}
        if verdict["impossible"]:
            raise _Failed(
                f"impossible time: {median_ms * 1e3:.1f} us is under "
                f"{sol.IMPOSSIBLE_FRACTION:g} x the speed-of-light floor "
                f"{floor['floor_s'] * 1e6:.1f} us ({verdict['pct_of_sol']:.0f}% of SOL for "
                f"{case['bytes']:.4g} bytes and {case['flops']:.4g} flops): the kernel does "
                "less work than the spec claims")
        return data


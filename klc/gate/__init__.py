"""The gate: no candidate kernel is accepted unless it compiles, computes what the reference
computes, and runs in a time that the speed-of-light floor makes plausible.

    gate(candidate, path, reference=original)  ->  GateRecord

Stages, in order (docs/spec.md, "The gate"):

1. compile (``klc.gate.compile``): NVRTC through CuPy, on any machine; registers, spills,
   static shared memory from ptxas's report; cubins cached by hash.
2. verify (``klc.gate.verify``, in the child): same fresh random inputs for reference and
   candidate (made on the device), 3 seeds x 2 sizes (one not a multiple of the block),
   poisoned outputs, guard zones, inputs checked unchanged, tolerance by dtype.
3. profile (``klc.gate.profile``, in the child): CUDA events, warm-up, then runs to a time
   budget (``Budget``), median, L2 flushed; the candidate timed twice (noise), interleaved
   in rounds with the reference.
4. SOL (``klc.gate.sol``): % of the floor max(bytes / bandwidth, flops / peak); a time under
   0.9 x the floor fails as impossible.

Where the data and the claims come from: sizes, verify sizes, argument shapes, roles and
initialisation, bytes, flops and tolerance are read from the *reference's* spec; the
candidate's spec contributes only what a rewrite may change (kernel name and template, grid,
block, dynamic shared memory, NVRTC options). A candidate cannot make itself look fast by
editing its own spec.

With no reference, the kernel is checked against itself: two runs on the same inputs must
agree within tolerance (this catches races and other nondeterminism), write every output
element, stay inside their buffers, leave inputs alone, not fault, not hang, and not beat
the SOL floor.

The child is a persistent worker per GPU by default (``klc.gate.worker``: the CUDA context,
modules, SOL figures and the reference's results outlive a trial; any fault, hang or CUDA
error retires it), or one process per trial with ``isolation="process"`` or
``KLC_GATE_ISOLATION=process``.

Inputs the gate cannot use (a spec that does not match the kernel, an unknown arch, a
reference that does not compile) raise ``KlcError``: that is the caller's error. Anything
wrong with the candidate itself is a failed ``GateRecord``, never an exception.
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klc.content import json_sha256
from klc.content import sha256 as _sha
from klc.cuda.parse import check_text, parse_bytes
from klc.errors import KlcError
from klc.spec import (
    Bound,
    Spec,
    check_spec,
    default_verify_sizes,
    element_count,
    evaluate,
    launch_dims,
    load_spec,
)

if TYPE_CHECKING:
    from klc.cuda.model import Unit
    from klc.gate.child import ChildOutcome
    from klc.gate.compile import CompileResult
    from klc.gate.profile import Budget

STAGES = ("compile", "verify", "profile")
GPU_STAGES = ("verify", "profile")
DEFAULT_SEEDS = 3

__all__ = ["STAGES", "GateRecord", "StageResult", "gate", "gpu_status"]


@dataclass
class StageResult:
    status: str  # "passed" | "failed" | "skipped"
    reason: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, **self.data}


@dataclass
class GateRecord:
    """What the gate decided about one candidate, and every number it decided on."""

    path: str
    kernel: str | None
    source_hash: str
    reference_path: str | None
    reference_hash: str | None
    arch: str
    options: tuple[str, ...]
    device: str | None
    stages: dict[str, StageResult]
    verdict: str = "skipped"  # "passed" | "failed" | "compiled" | "skipped"
    reason: str = ""
    elapsed_s: float = 0.0

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"

    @property
    def compile(self) -> StageResult | None:
        return self.stages.get("compile")

    @property
    def verify(self) -> StageResult | None:
        return self.stages.get("verify")

    @property
    def profile(self) -> StageResult | None:
        return self.stages.get("profile")

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path, "kernel": self.kernel, "source_hash": self.source_hash,
            "reference_path": self.reference_path, "reference_hash": self.reference_hash,
            "arch": self.arch, "options": list(self.options), "device": self.device,
            "verdict": self.verdict, "passed": self.passed, "reason": self.reason,
            "elapsed_s": round(self.elapsed_s, 3),
            "stages": {k: v.to_json() for k, v in self.stages.items()},
        }


def gpu_status() -> tuple[str | None, str]:
    """(``sm_XX`` of device 0, "") when a GPU is usable, else (None, why not); asked once
    per process and ``CUDA_VISIBLE_DEVICES``."""
    return _gpu_status(os.environ.get("CUDA_VISIBLE_DEVICES"))


@functools.cache
def _gpu_status(visible: str | None) -> tuple[str | None, str]:
    try:
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver, no library: all mean "no GPU"
        return None, f"no GPU ({str(e).splitlines()[0] if str(e) else type(e).__name__})"
    if count < 1:
        return None, "no GPU (the CUDA driver sees no device)"
    props = cupy.cuda.runtime.getDeviceProperties(0)
    return f"sm_{props['major']}{props['minor']}", ""


@dataclass
class _Side:
    """One kernel (reference or candidate) as the gate sees it."""

    path: str
    source: bytes
    spec: Spec | None
    bound: Bound | None


def _read_side(source: bytes, path: str) -> tuple[_Side, Unit]:
    """Read, parse and check one side; every problem here is bad input (KlcError)."""
    check_text(path, source)
    unit = parse_bytes(source, path)
    spec = load_spec(source, path)
    bound = check_spec(spec, unit) if spec is not None else None
    return _Side(path, source, spec, bound), unit


def gate(candidate: bytes, path: str, *, reference: bytes | None = None,
         reference_path: str | None = None, arch: str | None = None,
         stages: Iterable[str] = STAGES, timeout_s: float | None = None,
         seeds: Iterable[int] | None = None, isolation: str | None = None,
         budget: Budget | None = None) -> GateRecord:
    """Run the gate's stages on ``candidate`` (see the module doc for what each one checks).

    ``isolation``: "worker" (a persistent worker per GPU) or "process" (a process per trial);
    default ``$KLC_GATE_ISOLATION``, else "worker". ``budget``: how long profile times each
    series (``klc.gate.profile.Budget``; default warm-up 3, then 0.15 s or 200 runs, >= 10)."""
    from klc.gate.compile import DEFAULT_ARCH, check_arch, compile_unit
    from klc.gate.worker import isolation_mode

    t0 = time.monotonic()
    mode = isolation_mode(isolation)
    wanted = tuple(stages)
    for s in wanted:
        if s not in STAGES:
            raise KlcError(f"unknown gate stage {s!r} (stages: {', '.join(STAGES)})")
    if "compile" not in wanted and any(s in wanted for s in GPU_STAGES):
        wanted = ("compile", *wanted)  # nothing runs that was not compiled
    cand, cand_unit = _read_side(candidate, path)
    ref: _Side | None = None
    ref_unit = None
    if reference is not None:
        reference_path = reference_path or f"{path} (reference)"
        ref, ref_unit = _read_side(reference, reference_path)
        if ref.spec is None:
            raise KlcError(f"{reference_path}: the reference has no klc-spec block, so the gate "
                           "does not know how to launch it (see docs/spec.md)")
    device_arch, no_gpu = gpu_status()
    target = check_arch(arch) if arch else (device_arch or DEFAULT_ARCH)

    record = GateRecord(
        path=path, kernel=cand.bound.name_expression if cand.bound else None,
        source_hash=_sha(candidate), reference_path=reference_path if ref else None,
        reference_hash=_sha(reference) if reference is not None else None, arch=target,
        options=(), device=None, stages={})

    if "compile" in wanted:
        names = (cand.bound.name_expression,) if cand.bound else ()
        options = cand.spec.options if cand.spec else ()
        cres = compile_unit(cand_unit, arch=target, name_expressions=names, options=options)
        record.options = cres.options
        data = cres.to_json()
        if not arch:
            data["arch_from"] = "the device" if device_arch else \
                f"default ({DEFAULT_ARCH}): no GPU to ask"
        if cres.ok:
            main = cres.resources.get(names[0]) if names else None
            msg = "compiled"
            if main is not None:
                msg += (f": {main.registers} registers, {main.spill_stores} B spill stores, "
                        f"{main.spill_loads} B spill loads, {main.static_smem} B static smem")
            record.stages["compile"] = StageResult("passed", msg, data)
        else:
            record.stages["compile"] = StageResult("failed", cres.error or "compile failed",
                                                   data)
    ref_compiled = None
    if ref is not None and ref.bound is not None and record.stages.get("compile") and \
            record.stages["compile"].status == "passed":
        ref_compiled = compile_unit(ref_unit, arch=target,
                                    name_expressions=(ref.bound.name_expression,),
                                    options=ref.spec.options if ref.spec else ())
        if not ref_compiled.ok:
            raise KlcError(f"{reference_path}: the reference does not compile:\n"
                           f"{ref_compiled.error}")

    gpu_wanted = [s for s in GPU_STAGES if s in wanted]
    if gpu_wanted:
        skip = _static_skip_reason(record, cand)
        if skip:
            for s in gpu_wanted:
                record.stages[s] = StageResult("skipped", skip)
        else:
            _run_gpu_stages(record, cand, ref, ref_compiled, gpu_wanted, target,
                            timeout_s, seeds, _device_skip_reason(no_gpu, device_arch, target),
                            mode, budget)
    _decide(record, wanted)
    record.elapsed_s = time.monotonic() - t0
    return record


def _static_skip_reason(record: GateRecord, cand: _Side) -> str:
    """Why verify and profile cannot even be planned."""
    comp = record.stages.get("compile")
    if comp is not None and comp.status == "failed":
        return "not run: the candidate does not compile"
    if cand.bound is None:
        return ("cannot verify or profile: the file has no klc-spec block, so the gate does not "
                "know how to launch the kernel or on what data (see docs/spec.md)")
    return ""


def _device_skip_reason(no_gpu: str, device_arch: str | None, target: str) -> str:
    """Why the planned verify and profile cannot run here."""
    if device_arch is None:
        return (f"skipped because there is no GPU: compile ran (NVRTC needs none), verify and "
                f"profile need one; {no_gpu}")
    if target.rstrip("af") != device_arch:
        return f"skipped: compiled for {target}, but the device is {device_arch}"
    return ""


class _Mismatch(Exception):
    """The candidate's spec is not compatible with the reference's: a failed verify."""


def _buffer_bytes(bound: Bound, env: dict[str, Any]) -> dict[str, int]:
    from klc.gate.verify import storage_dtype

    out = {}
    for a in bound.args:
        if a.spec.is_buffer:
            n = element_count(a.spec.shape or (), env) * a.ctype.lanes
            out[a.spec.name] = n * storage_dtype(a.ctype.dtype).itemsize
    return out


def _build_job(cand: Bound, data: Bound, same: bool, sizes_list: list[dict[str, int]],
               seeds: list[int], stages: list[str]) -> dict[str, Any]:
    """Evaluate every expression for every case, so that the child only launches and checks."""
    from klc.gate.verify import tolerance_for

    if len(cand.args) != len(data.args):
        raise _Mismatch(f"the candidate takes {len(cand.args)} arguments, the reference "
                        f"{len(data.args)}")
    args = []
    for c, d in zip(cand.args, data.args, strict=True):
        if c.pointer != d.pointer or c.ctype.dtype != d.ctype.dtype:
            raise _Mismatch(f"argument {c.spec.name} of the candidate is "
                            f"{c.ctype.c_name}{'*' if c.pointer else ''}, the reference's "
                            f"{d.spec.name} is {d.ctype.c_name}{'*' if d.pointer else ''}")
        if c.pointer and c.spec.role != d.spec.role:
            raise _Mismatch(f"argument {c.spec.name} has role {c.spec.role} in the candidate, "
                            f"{d.spec.role} in the reference")
        args.append({"name": d.spec.name, "kind": "buffer" if d.pointer else "scalar",
                     "dtype": d.ctype.dtype, "lanes": d.ctype.lanes, "role": d.spec.role})
    if set(cand.spec.sizes) != set(data.spec.sizes):
        raise _Mismatch(f"the candidate's sizes ({', '.join(cand.spec.sizes)}) are not the "
                        f"reference's ({', '.join(data.spec.sizes)})")
    tol_spec = ({"rtol": data.spec.tolerance.rtol, "atol": data.spec.tolerance.atol}
                if data.spec.tolerance else None)
    tolerance = {a["name"]: list(tolerance_for(a["dtype"], tol_spec)) for a in args
                 if a["kind"] == "buffer"}

    def case(sizes: dict[str, int], seed: int, label: str) -> dict[str, Any]:
        env_d, env_c = data.env(sizes), cand.env(sizes)
        per_arg: dict[str, Any] = {}
        for c, d in zip(cand.args, data.args, strict=True):
            entry: dict[str, Any] = {}
            if d.pointer:
                n_d = element_count(d.spec.shape or (), env_d) * d.ctype.lanes
                n_c = element_count(c.spec.shape or (), env_c) * c.ctype.lanes
                if n_d != n_c:
                    raise _Mismatch(f"at {label}, buffer {c.spec.name} holds {n_c} elements in "
                                    f"the candidate's spec, {n_d} in the reference's")
                if n_d < 1:
                    raise _Mismatch(f"at {label}, buffer {d.spec.name} has no elements")
                entry["elements"] = n_d
            else:
                v_d = _scalar_value(d, env_d)
                v_c = _scalar_value(c, env_c)
                if v_d != v_c:
                    raise _Mismatch(f"at {label}, scalar {c.spec.name} is {v_c} in the "
                                    f"candidate's spec, {v_d} in the reference's")
                entry["value"] = v_d
            if d.spec.init is not None and entry.get("value") is None:
                entry["init"] = {"kind": d.spec.init.kind,
                                 "args": [evaluate(x, env_d) for x in d.spec.init.args]}
            per_arg[d.spec.name] = entry
        launch = {"candidate": _launch(cand, env_c)}
        if not same:
            launch["reference"] = _launch(data, env_d)
        return {"label": label, "sizes": sizes, "seed": seed, "args": per_arg,
                "launch": launch}

    def label(sizes: dict[str, int]) -> str:
        return " ".join(f"{k}={v}" for k, v in sizes.items())

    job: dict[str, Any] = {"stages": stages, "same_kernel": same, "args": args,
                           "tolerance": tolerance}
    if "verify" in stages:
        job["verify_cases"] = [case(s, seed, f"{label(s)} seed={seed}")
                               for s in sizes_list for seed in seeds]
        if dict(data.spec.sizes) not in [dict(s) for s in sizes_list]:
            # one seed at the profiling sizes, where the kernel is timed: fixed by the data
            # plan, so that the reference's outputs serve every trial against it
            big = case(data.spec.sizes, 0, "")
            plan = json.dumps({"sizes": big["sizes"], "args": big["args"]}, sort_keys=True)
            big["seed"] = int(_sha(plan.encode())[:8], 16) & 0x7FFFFFFF
            big["label"] = f"at the profiling size {label(data.spec.sizes)} seed={big['seed']}"
            job["profile_size_case"] = big
    if "profile" in stages:
        p = case(data.spec.sizes, seeds[0], label(data.spec.sizes))
        env = data.env()
        if data.spec.bytes is not None:
            p["bytes"] = float(evaluate(data.spec.bytes, env))
        else:  # each input read once, each output written once, inout both
            roles = {a.spec.name: a.spec.role for a in data.args}
            p["bytes"] = float(sum(b * (2 if roles[n] == "inout" else 1)
                                   for n, b in _buffer_bytes(data, env).items()))
        p["flops"] = float(evaluate(data.spec.flops, env)) if data.spec.flops else 0.0
        p["peak"] = data.spec.peak
        job["profile_case"] = p
    return job


def _scalar_value(b: Any, env: dict[str, Any]) -> Any:
    if b.spec.value is not None:
        return evaluate(b.spec.value, env)
    if b.spec.init is None and b.spec.name in env:
        return env[b.spec.name]
    return None  # random, from init


def _launch(b: Bound, env: dict[str, Any]) -> dict[str, Any]:
    from klc.spec import evaluate_int

    return {"grid": list(launch_dims(b.spec.grid, env)),
            "block": list(launch_dims(b.spec.block, env)),
            "shared": evaluate_int(b.spec.shared, env)}


def _run_gpu_stages(record: GateRecord, cand: _Side, ref: _Side | None,
                    ref_compiled: CompileResult | None,
                    stages: list[str], arch: str, timeout_s: float | None,
                    seeds: Iterable[int] | None, device_skip: str, isolation: str,
                    budget: Budget | None) -> None:
    """Plan the cases (static: the specs must fit each other, expressions must evaluate,
    so this runs without a GPU too), then run them in the child unless ``device_skip``."""
    from klc.gate.compile import compile_source
    from klc.gate.profile import Budget
    from klc.gate.sol import peak_source

    assert cand.bound is not None and cand.spec is not None
    same = ref is None
    data = cand.bound if same else ref.bound  # type: ignore[union-attr]
    assert data is not None
    seed_list = list(seeds) if seeds is not None else [secrets.randbits(31)
                                                        for _ in range(DEFAULT_SEEDS)]
    block_x = launch_dims(cand.spec.block, cand.bound.env())[0]
    sizes_list = list(data.spec.verify_sizes) or default_verify_sizes(data.spec.sizes, block_x)
    notes = []
    if block_x > 1 and not any(any(v % block_x for v in s.values()) for s in sizes_list):
        notes.append(f"no verify size is a non-multiple of the block ({block_x}): the tail "
                     "path is not exercised")
    try:
        job = _build_job(cand.bound, data, same, sizes_list, seed_list, stages)
    except (_Mismatch, KlcError) as e:
        record.stages[stages[0]] = StageResult(
            "failed", f"the candidate's spec does not fit the reference's: {e}")
        for s in stages[1:]:
            record.stages[s] = StageResult("skipped", f"not run: {stages[0]} failed")
        return
    if device_skip:
        n_cases = len(sizes_list) * len(seed_list)
        for s in stages:
            record.stages[s] = StageResult("skipped", device_skip,
                                           {"planned_cases": n_cases} if s == "verify" else {})
        return
    comp = record.stages["compile"].data
    job["kernels"] = {"candidate": {"cubin": comp["cubin"],
                                    "lowered": comp["lowered"][cand.bound.name_expression]}}
    if not same:
        assert ref_compiled is not None and ref_compiled.cubin_path is not None
        job["kernels"]["reference"] = {
            "cubin": ref_compiled.cubin_path,
            "lowered": ref_compiled.lowered[data.name_expression]}
    if "profile" in stages:
        peaks = compile_source(peak_source(), "klc_peaks.cu", arch=arch)
        job["peaks_cubin"] = peaks.cubin_path if peaks.ok else None
        job["budget"] = (budget or Budget()).to_json()
    timeout = timeout_s if timeout_s is not None else data.spec.timeout_s
    outcome = _run_job(job, timeout, isolation)
    result, proc = outcome.result, outcome.process
    dev = result.get("device")
    record.device = dev["name"] if dev else None
    got = result.get("stages", {})
    earlier_failed = None
    for s in stages:
        r = got.get(s)
        if earlier_failed is not None:
            record.stages[s] = StageResult("skipped", f"not run: {earlier_failed} failed")
            continue
        if r is None or r.get("status") == "running":
            extra = {k: v for k, v in (r or {}).items() if k != "status"}
            record.stages[s] = StageResult("failed", proc.describe(timeout), extra)
            earlier_failed = s
            continue
        body = {k: v for k, v in r.items() if k not in ("status", "reason")}
        body["isolation"] = isolation
        if s == "verify":
            body["seeds"] = seed_list
            body["sizes"] = sizes_list
            if notes:
                body["notes"] = notes
        record.stages[s] = StageResult(r["status"], r.get("reason", _summary(s, body)), body)
        if r["status"] == "failed":
            earlier_failed = s


def _run_job(job: dict[str, Any], timeout_s: float, isolation: str) -> ChildOutcome:
    """Run a planned job in a process of its own, or on this GPU's persistent worker; the
    worker gets the reference's timing from earlier trials of the series, and keeps the one
    it measures."""
    if isolation == "process":
        from klc.gate.child import run_isolated

        return run_isolated(job, timeout_s)
    from klc.gate.worker import pool

    workers = pool()
    key = _timing_key(job)
    if key is not None:
        key = f"{workers.key()}:{key}"
        cached = workers.timing(key)
        if cached is not None:
            job["reference_timing"] = cached
    outcome = workers.run(job, timeout_s)
    ref = outcome.result.get("stages", {}).get("profile", {}).get("series", {}).get(
        "reference")
    if key is not None and ref and not ref.get("cached"):
        workers.keep_timing(key, ref)
    return outcome


def _timing_key(job: dict[str, Any]) -> str | None:
    """What the reference's time depends on: its cubin, function, launch and data plan at
    the profiling size (not the seed: the values change, the work does not)."""
    kernel = job["kernels"].get("reference")
    case = job.get("profile_case")
    if kernel is None or case is None:
        return None
    try:
        cubin = _sha(Path(kernel["cubin"]).read_bytes())
    except OSError:
        return None
    parts = {"cubin": cubin, "function": kernel["lowered"],
             "launch": case["launch"]["reference"], "args": job["args"], "case": case["args"],
             "sizes": case["sizes"]}
    return json_sha256(parts)


def _summary(stage: str, data: dict[str, Any]) -> str:
    if stage == "verify":
        text = (f"{len(data.get('cases', []))} cases agree ({len(data.get('sizes', []))} sizes "
                f"x {len(data.get('seeds', []))} seeds)")
        big = data.get("profile_size")
        if big and big.get("skipped"):
            text += f"; not checked at the profiling size: {big['skipped']}"
        elif big:
            text += f", and {big['label'].replace(' seed=', ' (seed ')})"
        return text
    sol = data.get("sol", {})
    text = (f"median {data.get('median_ms', 0) * 1e3:.1f} us, {sol.get('pct_of_sol', 0):.0f}% "
            f"of SOL ({sol.get('bound', '?')}-bound floor {sol.get('floor_s', 0) * 1e6:.1f} us)"
            f", noise {100 * data.get('noise', 0):.1f}%")
    if "speedup" in data:
        text += f", {data['speedup']:.2f}x the reference"
    return text


def _decide(record: GateRecord, wanted: tuple[str, ...]) -> None:
    failed = next(((n, s) for n, s in record.stages.items() if s.status == "failed"), None)
    if failed is not None:
        record.verdict = "failed"
        record.reason = f"{failed[0]}: {failed[1].reason}"
        return
    ran = [n for n in wanted if record.stages.get(n) and record.stages[n].status == "passed"]
    if ran and len(ran) == len(wanted):
        record.verdict = "passed"
        record.reason = "; ".join(f"{n}: {record.stages[n].reason}" for n in ran)
    elif "compile" in ran:
        record.verdict = "compiled"
        skipped = [record.stages[n].reason for n in wanted if n not in ran]
        record.reason = f"compiled; verify/profile {skipped[0]}" if skipped else "compiled"
        record.reason = record.reason.replace("profile skipped because", "profile were skipped "
                                              "because", 1)
    else:
        record.verdict = "skipped"
        record.reason = "no stage ran"

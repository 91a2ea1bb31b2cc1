"""The work on one file, in a worker process or a Ray task: read, parse once, apply the rules
(or optimize), compile-check or gate; a bad file is a result, never an exception.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from klc.batch.config import (
    ACCEPTED_GATE_VERDICTS,
    ERROR,
    GATE_FAILED,
    MAX_REFUSED,
    PARSE_FAILED,
    REFUSED,
    REWRITTEN,
    SLOWER_MARGIN,
    UNCHANGED,
    BatchConfig,
    FileResult,
)
from klc.content import sha256 as _sha
from klc.content import unified_diff
from klc.errors import KlcError, shown
from klc.interrupts import die_with_parent, tune_gc

if TYPE_CHECKING:
    from klc.rewrite import Applied
    from klc.rule import Rule

# The work on one file (in a worker process or a Ray task)


@dataclass
class WorkerState:
    """What a worker holds for its lifetime: the configuration and its rules, loaded once."""

    config: BatchConfig
    rules: list[Rule]
    want_diff: bool
    gate_inline: bool  # gate here (no GPU workers: compile only) rather than on a GPU worker
    keep_original: bool  # send the original back (a GPU worker gates it later)
    send_unchanged: bool  # send the bytes back even when unchanged (--out copies them)


def _read(path: str) -> bytes:
    from klc.fsutil import read_input

    return read_input(path)  # regular files only, bounded (--max-bytes), never blocks


def process_path(state: WorkerState, path: str) -> FileResult:
    """Read one file and process it; never raises on a bad file."""
    t0 = time.perf_counter()
    try:
        data = _read(path)
    except KlcError as e:
        return FileResult(path, ERROR, str(e), elapsed_s=time.perf_counter() - t0)
    return process_bytes(state, data, path)


def process_bytes(state: WorkerState, data: bytes, path: str) -> FileResult:
    """Parse once, apply the rules (or optimize), gate: the result never raises on a bad
    file (LibCST's codemod results: a bad file is a result, not an exception)."""
    t0 = time.perf_counter()
    res = FileResult(path, UNCHANGED, input_sha=_sha(data))
    try:
        _process(state, data, path, res)
    except KlcError as e:
        res.status, res.reason, res.output = ERROR, str(e), None
    except Exception as e:  # a bug must cost this file only, and say what it was
        res.status, res.output = ERROR, None
        res.reason = f"{shown(path)}: internal error: {type(e).__name__}: {e}"
    if state.keep_original and res.status == REWRITTEN:
        res.original = data
    _settle(res, data, state.send_unchanged)
    res.elapsed_s = time.perf_counter() - t0
    return res


def _settle(res: FileResult, data: bytes, send_unchanged: bool) -> None:
    """Fix the bytes the run leaves for a file: the rewrite, or (an ``--out`` mirror) the
    original as it was, whatever happened to it."""
    if res.status != REWRITTEN:
        res.output = data if send_unchanged else None
    res.output_sha = _sha(res.output) if res.output is not None else res.input_sha


def _process(state: WorkerState, data: bytes, path: str, res: FileResult) -> None:
    from klc.cuda.parse import check_text, parse_bytes

    if not data.strip():
        res.notes.append(f"{shown(path)}: empty file")
        return
    check_text(path, data)
    unit = parse_bytes(data, path)
    if unit.problems:
        p = unit.problems[0]
        more = f" (and {len(unit.problems) - 1} more)" if len(unit.problems) > 1 else ""
        res.status = PARSE_FAILED
        res.reason = f"{p.describe(path)}{more}; the file was not rewritten"
        return
    done = None
    if state.config.optimize:
        new = _optimize(state, unit, res)
    else:
        done = _apply(state, unit, res)
        new = done.source if done is not None else None
    if new is None:
        return
    res.status, res.output = REWRITTEN, new
    if state.config.compile_check and not (state.config.gate or state.config.optimize):
        compile_check(state.config, res, unit, new)
        if res.output is None:
            return
    if state.want_diff:  # the one diff writer, as klc apply prints it (--annotate too)
        res.diff = done.diff(path, annotate=state.config.annotate) if done is not None \
            else unified_diff(data, new, path)
    if state.config.gate and state.gate_inline:
        gate_result(state.config, res, data, new)


def _apply(state: WorkerState, unit: Any, res: FileResult) -> Applied | None:
    """The rules applied once: what they did when they changed the file, else None."""
    from klc.pipeline import spec_of
    from klc.rewrite import apply_unit

    spec = spec_of(unit)  # a malformed spec is an error of the file, not a refusal
    try:
        done = apply_unit(unit, state.rules, dict(state.config.holes), spec=spec,
                          clang=not state.config.tree_only)
    except KlcError as e:
        # the rewrite would produce a syntax error: refused whole, nothing written
        res.status, res.reason = REFUSED, str(e)
        return None
    res.applied.extend(site.to_json() for site in done.sites)
    for site in done.refused:
        res.refused_by[site.stage] = res.refused_by.get(site.stage, 0) + 1
        if len(res.refused) < MAX_REFUSED:
            line, col = unit.position(site.match.start)
            res.refused.append({"rule": site.rule.name, "line": line, "col": col,
                                "stage": site.stage, "reason": site.reason})
    res.skipped = len(done.outcome.skipped)
    res.notes.extend(done.outcome.notes)
    if done.changed:
        return done
    if done.refused:
        res.status, res.reason = REFUSED, done.refusal()
    return None


def optimizer() -> Callable[..., Any]:
    """``klc.optimize.optimize``, imported when first needed; a clear error without it."""
    try:
        from klc.optimize import optimize
    except ModuleNotFoundError as e:
        if e.name != "klc.optimize":
            raise
        raise KlcError("--optimize needs the forward optimizer (klc.optimize), which this "
                       "installation of klc does not have yet") from None
    except ImportError as e:
        raise KlcError(f"--optimize: klc.optimize cannot be loaded: {e}") from None
    return optimize


# optimize_options the batch reads itself (klc.batch.run.share_budget), not OptimizeOptions'
BATCH_KEYS = ("total_budget", "budget_by_file", "probe")


def _optimize(state: WorkerState, unit: Any, res: FileResult) -> bytes | None:
    run = optimizer()
    from klc.optimize import OptimizeOptions

    opts = dict(state.config.optimize_options)
    shares = dict(opts.get("budget_by_file") or ())
    probing = bool(opts.get("probe"))
    for key in BATCH_KEYS:
        opts.pop(key, None)
    options = OptimizeOptions(skills=state.rules, arch=state.config.arch, **opts)
    if probing:  # the first pass of a shared budget: the original's gate run only
        from klc.optimize import probe

        res.optimize = {"probe": probe(unit.source, unit.path, options)}
        return None
    if unit.path in shares:
        if shares[unit.path] < 1:
            res.notes.append(f"{unit.path}: optimize: not run: no share of the batch's budget "
                             "(at the speed-of-light target, or the budget went to files "
                             "with more headroom)")
            return None
        options.budget = shares[unit.path]
    result = run(unit.source, unit.path, options)
    res.optimize = result.to_json()
    why = getattr(result, "stop_reason", "")
    if why:
        res.notes.append(f"{unit.path}: optimize: {why}")
    if result.changed and result.source != unit.source:
        res.checks = ["compile", "verify", "profile"]  # (kept only once it verified, faster)
        return bytes(result.source)
    return None


def compile_check(config: BatchConfig, res: FileResult, unit: Any, new: bytes) -> None:
    """An ungated rewrite is kept only if it compiles where its original does. Where nvcc is
    installed (klc.batch.nvcc) both are compiled whole by it (host code and the project's
    headers too, with the command's -I/-D); else by NVRTC (the gate's compile stage: device
    code, host code blanked, no GPU). The compiler that ran is named in the file's notes. A
    rewrite that breaks the build keeps the original (counted under ``refused_by``
    "compile", with the first error); an original that does not compile here (a header the
    compiler cannot find, host-only code NVRTC cannot blank) leaves nothing to compare
    against: the rewrite is kept, and counted as "compile_unchecked"."""
    from klc.batch.nvcc import find_nvcc, nvcc_compile
    from klc.cuda.parse import parse_bytes
    from klc.gate.compile import DEFAULT_ARCH, compile_unit, nvrtc_version

    arch = config.arch or DEFAULT_ARCH
    nvcc = find_nvcc()
    try:
        if nvcc is not None:
            b = nvcc_compile(nvcc, unit.source, unit.path, arch)
            compiler, before_ok, before_err = b.compiler, b.ok, b.error
        else:
            compiler = f"NVRTC {nvrtc_version()}"
            before = compile_unit(unit, arch=arch)
            before_ok, before_err = before.ok, before.error or ""
        res.notes.append(f"{res.path}: compile-checked with {compiler}")
        if not before_ok:
            res.refused_by["compile_unchecked"] = 1
            first = before_err.strip().splitlines()[:1]
            res.notes.append(f"{res.path}: not compile-checked: the original does not compile "
                             f"with {compiler} here ({first[0] if first else 'no log'})")
            return
        if nvcc is not None:
            a = nvcc_compile(nvcc, new, unit.path, arch)
            after_ok, after_err = a.ok, a.error
        else:
            after = compile_unit(parse_bytes(new, unit.path), arch=arch)
            after_ok, after_err = after.ok, after.error or ""
    except KlcError as e:
        res.refused_by["compile_unchecked"] = 1
        res.notes.append(f"{res.path}: not compile-checked: {e}")
        return
    if after_ok:
        res.checks = ["compile"]
        return
    rules = ", ".join(sorted({a["rule"] for a in res.applied}))
    first = after_err.strip().splitlines()[:1]
    res.status, res.output, res.diff = REFUSED, None, ""
    res.refused_by["compile"] = res.refused_by.get("compile", 0) + len(res.applied)
    res.reason = (f"the rewrite ({rules}) does not compile where the original does (both "
                  f"compiled with {compiler}): {first[0] if first else 'the compiler failed'}; "
                  "the original is kept")
    res.applied = []


def gate_result(config: BatchConfig, res: FileResult, original: bytes, candidate: bytes) -> None:
    """Gate a rewritten file against its original; a failed gate keeps the original (the
    candidate is dropped), and the reason is the gate's."""
    from klc.gate import gate
    from klc.spec import load_spec

    path = res.path
    try:
        has_spec = load_spec(original, path) is not None
        if has_spec:
            record = gate(candidate, path, reference=original,
                          reference_path=f"{path} (original)", arch=config.arch,
                          timeout_s=config.gate_timeout, stages=config.gate_stages)
        else:
            record = gate(candidate, path, arch=config.arch, timeout_s=config.gate_timeout,
                          stages=config.gate_stages)
            res.notes.append(f"{shown(path)}: no klc-spec block: the gate compiled the rewrite but "
                             "cannot verify or profile it (see docs/spec.md)")
    except KlcError as e:
        res.status, res.reason, res.output, res.diff = GATE_FAILED, f"gate: {e}", None, ""
        res.gate = {"verdict": "failed", "reason": str(e)}
        return
    except Exception as e:  # the gate isolates kernels; this is the gate itself failing
        res.status, res.output, res.diff = GATE_FAILED, None, ""
        res.reason = f"{shown(path)}: gate: internal error: {type(e).__name__}: {e}"
        res.gate = {"verdict": "failed", "reason": res.reason}
        return
    res.gate = record.to_json()
    if record.verdict not in ACCEPTED_GATE_VERDICTS:
        res.status, res.output, res.diff = GATE_FAILED, None, ""
        res.reason = f"{shown(path)}: gate {record.verdict}: {record.reason}"
        return
    skipped = [s for s in config.gate_stages if s in record.stages
               and record.stages[s].status == "skipped"]
    if skipped and has_spec:  # asked for, and possible for this file, but not run here
        res.status, res.output, res.diff = GATE_FAILED, None, ""
        res.reason = (f"{shown(path)}: gate: {' and '.join(skipped)} asked for (--gate-stages) but "
                      f"not run: {record.stages[skipped[0]].reason}; the original is kept")
        return
    res.checks = [s for s, st in record.stages.items() if st.status == "passed"]
    profile = record.stages.get("profile")
    data = profile.data if profile is not None else {}
    speedup, noise = data.get("speedup"), data.get("noise") or 0.0
    if isinstance(speedup, (int, float)) and speedup < 1 - max(SLOWER_MARGIN, noise):
        # verified, but slower than the original beyond the noise: a batch keeps the original
        rules = ", ".join(sorted({a["rule"] for a in res.applied}))
        res.status, res.output, res.diff = REFUSED, None, ""
        res.refused_by["slower"] = res.refused_by.get("slower", 0) + len(res.applied)
        res.reason = (f"{shown(path)}: gate: the rewrite ({rules}) verifies but runs "
                      f"{speedup:.2f}x the original, slower beyond the noise: the original is kept")
        res.applied = []


# --------------------------------------------------------------------------------------
# Worker processes (local executor)

_STATE: WorkerState | None = None
_RULES_BY_DIGEST: dict[str, list[Rule]] = {}  # a Ray worker process serves many tasks


def _rules_for(config: BatchConfig) -> list[Rule]:
    key = config.digest()
    if key not in _RULES_BY_DIGEST:
        _RULES_BY_DIGEST[key] = config.load_rules()
    return _RULES_BY_DIGEST[key]


def _worker_init(config: BatchConfig, want_diff: bool, use_gpus: bool, send_unchanged: bool
                 ) -> tuple[Any, ...]:
    """``_init_worker``'s arguments for a rewriting worker (the gate runs in it unless GPU
    workers gate, which then need the original bytes)."""
    return (config, want_diff, not use_gpus, use_gpus, send_unchanged, None)


def _init_worker(config: BatchConfig, want_diff: bool, gate_inline: bool, keep_original: bool,
                 send_unchanged: bool, gpu: str | None) -> None:
    """Runs once in each worker process: Ctrl-C is the driver's to handle, the worker dies
    with its driver (Linux), a GPU worker sees its one GPU, the rules are loaded."""
    import signal

    global _STATE
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    _tune_gc()
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    _STATE = WorkerState(config, _rules_for(config), want_diff, gate_inline, keep_original,
                         send_unchanged)


_GC_TUNED = False


def _tune_gc() -> None:
    """``tune_gc``, once, and only in processes the batch owns (its workers)."""
    global _GC_TUNED
    if not _GC_TUNED:
        tune_gc()
        _GC_TUNED = True


def _work_chunk(paths: list[str]) -> list[FileResult]:
    assert _STATE is not None, "worker not initialized"
    return [process_path(_STATE, p) for p in paths]


def _gate_job(config: BatchConfig, res: FileResult, send_unchanged: bool) -> FileResult:
    """On a GPU worker: gate one rewritten file (its original travels with it)."""
    assert res.original is not None and res.output is not None
    t0 = time.perf_counter()
    original, res.original = res.original, None
    gate_result(config, res, original, res.output)
    if res.gate is not None:  # which GPU gated it (this worker's one)
        res.gate["worker_gpu"] = os.environ.get("CUDA_VISIBLE_DEVICES")
    _settle(res, original, send_unchanged)
    res.elapsed_s += time.perf_counter() - t0
    return res

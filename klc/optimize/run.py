"""``optimize()``: check the input, gate the baseline, run the loop (or, without a GPU or a
klc-spec, the static part only), re-verify the final kernel.
"""


from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klc.content import sha256
from klc.errors import KlcError
from klc.fill import FillRequest
from klc.fill.trial import resolve_arch
from klc.optimize.loop import _Loop, make_filler
from klc.optimize.options import OptimizeOptions, ProgressFn
from klc.optimize.result import OptimizeResult, TrialLog, summarize
from klc.optimize.targets import Version, build_targets, check_target
from klc.optimize.tiers import TierRanking

if TYPE_CHECKING:
    from klc.cuda.model import Unit
    from klc.fill import Filler
    from klc.gate import GateRecord
    from klc.rule import Rule


def optimize(source: bytes, path: str, options: OptimizeOptions | None = None
             ) -> OptimizeResult:
    """Optimize one kernel with skills under the gate (see :mod:`klc.optimize`); what to
    try, how long and how is ``options`` (``OptimizeOptions``: the command's defaults when
    None)."""
    from klc.cuda.parse import check_text, parse_bytes
    from klc.gate import gate, gpu_status
    from klc.gate.cache import CachedGate, GateCache, device_name
    from klc.pipeline import spec_of

    opts = options or OptimizeOptions()
    if opts.budget < 1:
        raise KlcError(f"--budget {opts.budget}: the budget must be at least 1 gate trial")
    if not 0 < opts.target_sol <= 1:
        raise KlcError(f"--target-sol {opts.target_sol}: give a fraction in (0, 1]")
    check_text(path, source)
    unit = parse_bytes(source, path)
    if unit.problems:
        raise KlcError(f"{unit.problems[0].describe(path)}: fix the syntax before optimizing")
    spec = spec_of(unit)  # a bad spec is the user's error, here, before any work
    skills = opts.skills
    if skills is None:
        from klc.rule import RuleSet, default_skill_dirs

        skills = list(RuleSet.load(default_skill_dirs()).rules)
    skills = [r for r in skills if r.kind == "skill"] or list(skills)
    device_arch, no_gpu = gpu_status()
    target = resolve_arch(opts.arch) if opts.arch else (device_arch or resolve_arch(None))
    fill = make_filler(opts.filler, model=opts.model, arch=target, seed=opts.seed,
                       include_slower=opts.include_slower, llm_timeout_s=opts.llm_timeout_s,
                       llm_retries=opts.llm_retries) \
        if isinstance(opts.filler, str) else opts.filler
    has_gpu = opts.gpu if opts.gpu is not None else device_arch is not None
    result = OptimizeResult(path=path, original=source, source=source, changed=False,
                            verified=False, mode="gpu", budget=opts.budget,
                            target_sol=opts.target_sol, arch=target, filler=fill.name)
    gate_fn = opts.gate_fn or gate
    if spec is None or not has_gpu:
        why = ("the file has no klc-spec block, so the gate does not know how to launch it "
               "(see docs/spec.md)" if spec is None else no_gpu or "no GPU")
        return _static(result, unit, spec, skills, fill, target, gate_fn, opts.unverified,
                       why, opts.progress, opts.include_slower, opts.rank_by_headroom)

    cache = GateCache.open(opts.cache_dir) if opts.use_cache else None
    runner = CachedGate(cache, gate_fn, target, device_name())
    recipes = opts.recipes
    if recipes is None:
        from klc.recipes import load as load_recipes

        recipes = load_recipes(sorted({Path(r.path).parent for r in skills if r.path}))
    loop = _Loop(source, path, skills, fill, target, runner, opts, list(recipes))
    loop.emit("start", kernel=path)
    base_rec, hit = loop.gate(source, None)
    base = summarize(base_rec)
    result.baseline = base
    loop.trials.append(TrialLog(loop.used, 0, "(original)", path, "", {}, base_rec.verdict,
                                base_rec.reason, hit, base.get("median_ms"), 1.0,
                                base.get("noise"), base.get("pct_of_sol"),
                                base_rec.elapsed_s, "baseline"))
    if not base_rec.passed:
        raise KlcError(f"{path}: the original kernel does not pass its own gate, so nothing "
                       f"can be verified against it: {base_rec.reason}")
    loop.visited.add(sha256(source))
    start = Version(source, unit, spec, 1.0, base.get("median_ms"), base.get("noise") or 0.0,
                     base.get("pct_of_sol"))
    try:
        final, why = loop.loop(start)
    finally:
        result.trials, result.steps = loop.trials, loop.steps
        result.trials_used, result.cache_hits = loop.used, loop.hits
        result.static_refusals = loop.refusals + [
            {"skill": sk.split("@")[0], "site_key": sk, **c.to_json()}
            for sk, c in getattr(fill, "refusals", [])]
        result.usage = {"filler": fill.name, **fill.usage(), "gate_trials": loop.used,
                        "cache_hits": loop.hits}
        result.skipped = list(loop.ranking.skipped.values())
        result.ranking = loop.ranking.rounds
        result.left_out = list(loop.ranking.left_out.values())
    result.stop_reason = why
    result.notes.extend(loop.notes)
    if getattr(fill, "without_optuna", False):
        from klc.extras import hint

        result.notes.append("the search filler sampled large hole domains at random: optuna "
                            f"is not installed ({hint('optuna')} for its TPE sampler)")
    result.notes.extend(loop.ranking.skipped_notes())
    for e in result.left_out:
        result.notes.append(f"{e['skill']} ({e['location']}, {e['reach']}) was not tried: at "
                            f"{e['pct_of_sol']:.0f}% of SOL only cheap skills are worth a "
                            f"trial; it applied at {', '.join(e['sites'])}")
    if final.source == source:
        result.notes.append(f"nothing improved the kernel: {why}")
        loop.emit("done", changed=False)
        return result
    _reverify(result, loop, final, source)
    loop.emit("done", changed=result.changed)
    return result


def probe(source: bytes, path: str, options: OptimizeOptions | None = None) -> dict[str, Any]:
    """The original's gate run against itself, exactly as :func:`optimize` gates its
    baseline (the same cache key: the optimize run that follows finds it in the cache and
    spends nothing on it): ``pct_of_sol`` (None without a GPU, without a klc-spec block or
    when the original fails its own gate, ``reason`` says which), ``median_ms`` and
    ``spent`` (1 gate trial, 0 for a cache hit). What ``klc batch --optimize`` measures of
    each file before it shares its budget by headroom."""
    from klc.cuda.parse import check_text, parse_bytes
    from klc.gate import gate, gpu_status
    from klc.gate.cache import CachedGate, GateCache, device_name
    from klc.pipeline import spec_of

    opts = options or OptimizeOptions()
    check_text(path, source)
    unit = parse_bytes(source, path)
    if unit.problems:
        return {"pct_of_sol": None, "spent": 0, "reason": unit.problems[0].describe(path)}
    spec = spec_of(unit)
    device_arch, no_gpu = gpu_status()
    has_gpu = opts.gpu if opts.gpu is not None else device_arch is not None
    if spec is None or not has_gpu:
        return {"pct_of_sol": None, "spent": 0,
                "reason": "no klc-spec block" if spec is None else no_gpu or "no GPU"}
    target = resolve_arch(opts.arch) if opts.arch else (device_arch or resolve_arch(None))
    cache = GateCache.open(opts.cache_dir) if opts.use_cache else None
    runner = CachedGate(cache, opts.gate_fn or gate, target, device_name())
    record, hit = runner.run(source, path, reference=None, reference_path=None, seeds=None)
    s = summarize(record)
    return {"pct_of_sol": s.get("pct_of_sol") if record.passed else None,
            "median_ms": s.get("median_ms"), "verdict": record.verdict,
            "reason": record.reason, "spent": 0 if hit else 1}


def _reverify(result: OptimizeResult, loop: _Loop, final: Version, original: bytes) -> None:
    """Gate the final kernel against the original once more, with fresh seeds."""
    seeds: list[int] = []
    while len(seeds) < 3:
        s = secrets.randbits(31)
        if s not in loop.seeds_seen and s not in seeds:
            seeds.append(s)
    loop.emit("reverify")
    record, _ = loop.gate(final.source, original, seeds=seeds)
    summary = summarize(record)
    result.final = summary
    result.reverify = record.to_json()
    if not record.passed:
        result.notes.append(f"the final kernel FAILED the independent re-verification "
                            f"(seeds {seeds}): {record.reason}; the original is kept")
        return
    speedup = summary.get("speedup")
    noise = loop.judge.threshold(summary.get("noise"))
    if speedup is None or speedup <= 1 + noise:
        shown = f"{speedup:.3f}x" if speedup else "untimed"
        result.notes.append(f"the re-verification passed but measured {shown} the original "
                            f"(not beyond the noise, {100 * noise:.1f}%); the original is kept")
        return
    result.source = final.source
    result.changed = True
    result.verified = True


def _static(result: OptimizeResult, unit: Unit, spec: Any, skills: list[Rule], fill: Filler,
            arch: str, gate_fn: Callable[..., GateRecord], unverified: bool, why: str,
            progress: ProgressFn | None, include_slower: bool = False,
            by_headroom: bool = True) -> OptimizeResult:
    """No GPU or no spec: sites, hole values, static checks and the gate's compile; nothing
    verified, nothing timed, nothing claimed. Nothing measured the headroom: the sites go
    in the order of the mid regime (expected gain, uncapped; ``klc.optimize.headroom``)."""
    result.mode = "static"
    result.notes.append(f"cannot verify or time: {why}. Only the static part ran (sites, hole "
                        "values, guards, NVRTC compile, registers/spills/shared memory): the "
                        "candidates below are compile-clean, not verified, and no speedup is "
                        "claimed")
    if progress:
        progress("start", {"used": 0, "budget": 0, "kernel": result.path})
    ranking = TierRanking(skills, include_slower=include_slower, by_headroom=by_headroom)
    sites = ranking.sites(unit, spec, None)  # nothing measured: the mid regime's order
    result.skipped = list(ranking.skipped.values())
    result.notes.extend(ranking.skipped_notes())
    if not sites:
        result.stop_reason = ranking.none_applies()
    for target in build_targets(sites, set()):
        site = target.site
        req = FillRequest(site.rule, site, unit, spec, history=[], budget=1)
        try:
            proposals = fill.propose(req, 1)
        except KlcError as e:
            result.notes.append(f"{target.where}: {site.rule.name}: {e}")
            continue
        if not proposals and getattr(fill, "last_reason", ""):
            result.notes.append(fill.last_reason)  # type: ignore[attr-defined]
        for values in proposals[:1]:
            check = check_target(unit, target, values, spec, arch)
            entry: dict[str, Any] = {"skill": site.rule.name, "site": target.where,
                                     "function": site.function_name, **check.to_json()}
            if not check.ok:
                result.static_refusals.append(entry)
                continue
            assert check.source is not None
            try:  # without a spec there is nothing to verify against: compile only
                record = gate_fn(check.source, result.path, arch=arch,
                                 reference=result.original if spec is not None else None,
                                 reference_path=result.path if spec is not None else None)
            except KlcError as e:
                result.static_refusals.append({**entry, "ok": False, "stage": "gate",
                                               "reason": str(e)})
                continue
            entry["gate"] = summarize(record)
            if record.verdict == "failed":
                entry["ok"] = False
                entry["reason"] = record.reason
                result.static_refusals.append(entry)
                continue
            entry["source_sha256"] = sha256(check.source)
            result.static_candidates.append(entry)
            if unverified and not result.changed:
                result.source = check.source
                result.changed = True
    for sk, c in getattr(fill, "refusals", []):
        result.static_refusals.append({"skill": sk.split("@")[0], "site_key": sk,
                                       **c.to_json()})
    result.usage = {"filler": fill.name, **fill.usage(), "gate_trials": 0, "cache_hits": 0}
    if result.changed:
        first = result.static_candidates[0]
        result.notes.append(f"--unverified: wrote the first compile-clean candidate "
                            f"({first['skill']} at {first['site']}); it is NOT verified")
    if not result.stop_reason:
        result.stop_reason = (f"static only: {len(result.static_candidates)} compile-clean "
                              "candidate(s), none verified")
    if progress:
        progress("done", {"used": 0, "budget": 0, "changed": result.changed})
    return result

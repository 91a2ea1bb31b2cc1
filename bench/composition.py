"""Do the rewrites of one run compose? Every pair of rules that apply to a kernel, and the
whole library at once, applied ungated (as ``klc apply`` and ``klc batch`` apply them) to
kernels with a klc-spec; each distinct rewrite is checked against its original.

    python bench/composition.py --rules skills passes --kernels bench/transfer bench/heldout \\
        --out DIR [--stages compile,verify] [--max-pairs N] [--deadline S] [-j N]

Static checks (no GPU): the rewrite compiles with NVRTC where the original does; no kernel's
``__launch_bounds__`` is below the block its spec or launches give; each site applied in a
round, judged again after the rewrites of the other rules taken before it in that round
(one after another, as the run claims to be equivalent to), still holds (``stale``). On a
GPU (``verify`` in ``--stages``): the gate verifies the rewrite against its original (same
inputs, poisoned outputs, tolerance by dtype). Rules that change results (a card with
``precision``) are left out, as an ungated batch leaves them out.

Prints a table per kernel and the count of failures; writes ``composition.json`` and
``composition.md`` under ``--out``. Exit 0 when nothing failed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import itertools
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Case:
    """One rewrite of one kernel: the rules applied, and what each check said."""

    kernel: str
    rules: list[str]  # the rules asked for ("*": the whole library)
    applied: list[str] = field(default_factory=list)
    source: str = ""  # the rewritten text ("" when nothing applied)
    problems: list[str] = field(default_factory=list)  # static failures
    verify: str = ""  # "passed" | "failed: why" | "" (not run)


def load_rules(dirs: list[str]) -> list[Any]:
    """The rules of the folders, those that change results left out."""
    from klc import plugins
    from klc.rule import RuleSet

    plugins.load()  # (the rule loader's vocabulary, in each worker process too)
    return [r for r in RuleSet.load(dirs).rules if not r.card.precision]


def applicable(path: Path, rules: list[Any]) -> list[str]:
    """The names of the rules with an applicable site in the kernel."""
    from klc.cuda.parse import parse_file
    from klc.pipeline import find_sites, spec_of

    unit = parse_file(str(path))
    return sorted({s.rule.name for s in find_sites(unit, rules, None, spec_of(unit)) if s.ok})


def launch_bound_problems(source: bytes, path: str) -> list[str]:
    """Kernels whose ``__launch_bounds__`` allow fewer threads than the block their spec or
    their launches in the file give."""
    from klc.analysis.constants import Evaluator, block_dims
    from klc.cuda.parse import parse_bytes
    from klc.guards import GuardContext
    from klc.match import Match
    from klc.pipeline import spec_of

    unit = parse_bytes(source, path)
    spec = spec_of(unit)
    out = []
    for fn in unit.kernels:
        if fn.launch_bounds is None:
            continue
        ctx = GuardContext(Match(None, unit, fn, fn.start, fn.end, (), {}), {}, spec)
        cap = Evaluator(ctx).text(fn.launch_bounds.max_threads)
        dims, _, _ = block_dims(ctx)  # (exact: the spec's block, or the launches')
        if isinstance(cap, int) and dims is not None and dims[0] * dims[1] * dims[2] > cap:
            out.append(f"`{fn.name}`: block {list(dims)} above __launch_bounds__({cap})")
    return out


def stale_problems(outcome: Any) -> list[str]:
    """The sites of a round applied one rule after another, in the order the run took them,
    each rule judged on the code the rules before it left: a rule that no longer holds there
    as often as the round applied it was applied on a stale verdict."""
    from klc.cuda.parse import parse_bytes
    from klc.pipeline import apply_rules, find_sites, spec_of

    out: list[str] = []
    rounds: dict[int, list[Any]] = {}
    for rw in outcome.applied:
        rounds.setdefault(id(rw.match.unit), []).append(rw)
    for applied in rounds.values():
        order: dict[str, Any] = {}
        for rw in applied:
            order.setdefault(rw.match.rule.name, rw.match.rule)
        cur = applied[0].match.unit
        for i, (name, rule) in enumerate(order.items()):
            count = sum(rw.match.rule.name == name for rw in applied)
            if i:
                ok = [s for s in find_sites(cur, [rule], None, spec_of(cur)) if s.ok]
                if len(ok) < count:
                    out.append(f"{name}: applied {count}x in a round after "
                               f"{', '.join(list(order)[:i])}, but holds at {len(ok)} site(s) "
                               "of their rewrite")
                    break
            if i < len(order) - 1:
                cur = parse_bytes(apply_rules(cur, [rule], None, spec_of(cur)).source,
                                  cur.path)
    return out


def compile_problems(original: bytes, new: bytes, path: str) -> list[str]:
    """The rewrite does not compile (NVRTC) where the original does."""
    from klc.cuda.parse import parse_bytes
    from klc.gate.compile import DEFAULT_ARCH, compile_unit

    if not compile_unit(parse_bytes(original, path), arch=DEFAULT_ARCH).ok:
        return []  # nothing to compare against
    after = compile_unit(parse_bytes(new, path), arch=DEFAULT_ARCH)
    if after.ok:
        return []
    first = (after.error or "").strip().splitlines()[:1]
    return [f"does not compile: {first[0] if first else 'no log'}"]


def cases_of(path: Path, rules: list[Any], max_pairs: int | None) -> list[list[str]]:
    """The whole library, then every pair of the rules that apply to the kernel."""
    names = applicable(path, rules)
    pairs = [list(p) for p in itertools.combinations(names, 2)]
    return [["*"], *(pairs[:max_pairs] if max_pairs is not None else pairs)]


def run_case(path: str, rule_dirs: list[str], names: list[str], static: bool) -> Case:
    """Apply the rules to one kernel and run the static checks on the rewrite."""
    from klc.cuda.parse import parse_file
    from klc.errors import KlcError
    from klc.pipeline import apply_rules, spec_of

    rules = _rules(tuple(rule_dirs))
    chosen = rules if names == ["*"] else [r for r in rules if r.name in names]
    case = Case(path, names)
    unit = parse_file(path)
    try:
        outcome = apply_rules(unit, chosen, None, spec_of(unit))
    except KlcError as e:  # a rewrite that would not parse is refused whole
        case.problems.append(f"refused: {e}")
        return case
    case.applied = [rw.match.rule.name for rw in outcome.applied]
    if not outcome.changed:
        return case
    case.source = outcome.source.decode("utf-8")
    if static:
        case.problems += launch_bound_problems(outcome.source, path)
        case.problems += stale_problems(outcome)
        case.problems += compile_problems(unit.source, outcome.source, path)
    return case


_RULES: dict[tuple[str, ...], list[Any]] = {}


def _rules(dirs: tuple[str, ...]) -> list[Any]:
    if dirs not in _RULES:
        _RULES[dirs] = load_rules(list(dirs))
    return _RULES[dirs]


def kernels_of(dirs: list[str]) -> list[Path]:
    """The ``.cu`` files of the folders that carry a klc-spec."""
    out = []
    for d in dirs:
        for f in sorted(Path(d).glob("*.cu")):
            if b"klc-spec" in f.read_bytes():
                out.append(f)
    return out


def _gate_one(kernel: str, source: str, stages: tuple[str, ...], deadline: float) -> str:
    """The gate's verdict on one rewrite against its original ("" past the deadline)."""
    from klc.errors import KlcError
    from klc.gate import gate

    if time.time() > deadline:
        return ""
    try:
        rec = gate(source.encode(), kernel, reference=Path(kernel).read_bytes(),
                   reference_path=kernel, stages=stages)
    except KlcError as e:
        return f"failed: {e}"
    return "passed" if rec.verdict == "passed" else f"failed: {rec.reason}"


def verify(cases: list[Case], stages: tuple[str, ...], deadline: float, jobs: int) -> int:
    """Gate each distinct rewrite against its original in ``jobs`` processes (each with its
    gate worker on the GPU), the whole-library rewrites first. Returns how many were left
    unverified at the deadline (a wall-clock time)."""
    todo: dict[tuple[str, str], list[Case]] = {}
    for c in sorted((c for c in cases if c.source and not c.problems),
                    key=lambda c: c.rules != ["*"]):
        todo.setdefault((c.kernel, c.source), []).append(c)
    keys = list(todo)
    with cf.ProcessPoolExecutor(max(1, jobs)) as pool:
        verdicts = pool.map(_gate_one, [k for k, _ in keys], [s for _, s in keys],
                            [stages] * len(keys), [deadline] * len(keys))
        for key, verdict in zip(keys, verdicts, strict=True):
            for c in todo[key]:
                c.verify = verdict
    return sum(1 for k in keys if not todo[k][0].verify)


def table(cases: list[Case], stages: tuple[str, ...], left: int, device: str,
          static: bool = True) -> str:
    """The Markdown table: per kernel, the cases, distinct rewrites and failures."""
    by: dict[str, list[Case]] = {}
    for c in cases:
        by.setdefault(c.kernel, []).append(c)
    lines = [f"device: {device}; checks: "
             + ("static (NVRTC compile, launch bounds, stale verdicts)" if static else
                "static checks not run (--no-static)")
             + (", the gate's " + ", ".join(stages) + " against the original" if len(stages) > 1
                else ""), "",
             "| kernel | cases | rewrites | distinct | static fails | verify fails | verified |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    total = {"cases": 0, "rewrites": 0, "distinct": 0, "static": 0, "verify": 0, "ok": 0}
    for kernel, cs in by.items():
        rw = [c for c in cs if c.source]
        distinct = len({c.source for c in rw})
        static = sum(bool(c.problems) for c in cs)
        vfail = len({c.source for c in rw if c.verify.startswith("failed")})
        vok = len({c.source for c in rw if c.verify == "passed"})
        for k, v in zip(total, (len(cs), len(rw), distinct, static, vfail, vok), strict=True):
            total[k] += v
        lines.append(f"| {Path(kernel).name} | {len(cs)} | {len(rw)} | {distinct} | {static} | "
                     f"{vfail} | {vok} |")
    lines.append("| **all** | " + " | ".join(str(v) for v in total.values()) + " |")
    lines += ["", f"failures: {total['static'] + total['verify']} ({total['static']} static, "
              f"{total['verify']} verify); distinct rewrites not verified by the deadline: {left}"]
    for c in cases:
        for p in c.problems:
            lines.append(f"- {Path(c.kernel).name} [{', '.join(c.rules)}]: {p}")
        if c.verify.startswith("failed"):
            lines.append(f"- {Path(c.kernel).name} [{', '.join(c.rules)}]: verify "
                         f"{c.verify.splitlines()[0]}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", nargs="+", required=True, metavar="DIR")
    ap.add_argument("--kernels", nargs="+", required=True, metavar="DIR")
    ap.add_argument("--out", required=True, metavar="DIR")
    ap.add_argument("--stages", default="compile,verify",
                    help="gate stages per rewrite (compile: the static checks only)")
    ap.add_argument("--max-pairs", type=int, default=None, metavar="N",
                    help="at most N pairs per kernel (default: every pair)")
    ap.add_argument("--deadline", type=float, default=None, metavar="S",
                    help="stop gating after S seconds (the rest is counted as not verified)")
    ap.add_argument("--no-static", action="store_true", help="skip the NVRTC and oracle checks")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1,
                    help="processes that apply the rules and run the static checks")
    ap.add_argument("--gate-jobs", type=int, default=4, metavar="N",
                    help="processes that gate at once, each with its own gate worker")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    from klc.gate import gpu_status

    arch, why = gpu_status()
    if "verify" in stages and arch is None:  # never a silent downgrade to compile only
        print(f"composition: --stages asks for verify, which needs a GPU: {why} (give "
              "--stages compile for the static checks alone)", file=sys.stderr)
        return 2
    rules = _rules(tuple(args.rules))
    jobs = [(str(k), names) for k in kernels_of(args.kernels)
            for names in cases_of(k, rules, args.max_pairs)]
    with cf.ProcessPoolExecutor(max(1, args.j)) as pool:
        cases = list(pool.map(run_case, *zip(*[(k, args.rules, n, not args.no_static)
                                                 for k, n in jobs], strict=True),
                              chunksize=4))
    deadline = time.time() + args.deadline if args.deadline else float("inf")
    left = verify(cases, stages, deadline, args.gate_jobs) if "verify" in stages else 0
    device = _device_name() if arch else why
    text = table(cases, stages, left, device, not args.no_static)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "composition.md").write_text(text)
    (out / "composition.json").write_text(json.dumps(
        {"device": device, "stages": stages, "elapsed_s": round(time.monotonic() - t0, 1),
         "cases": [asdict(c) | {"source": None} for c in cases]}, indent=1))
    sys.stdout.write(text)
    failed = any(c.problems or c.verify.startswith("failed") for c in cases)
    return 1 if failed else 0


def _device_name() -> str:
    import cupy

    return str(cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())


if __name__ == "__main__":
    sys.exit(main())

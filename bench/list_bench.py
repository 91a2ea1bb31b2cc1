"""Benchmark `klc list` with the whole rule library over a folder of kernel files.

Prints files/s for the command itself, end to end (``klc list --tree-only DIR -j 1`` and
``-j N`` run as a user runs them: process start, walk, workers, the listing written to a
file), for klc's listing in one process through its API (parse, match, context, guards with
tree-sitter facts only; nothing printed), the plain anchor matching alone, and ast-grep
(``ast-grep-cli`` from PyPI, C++ language) running the same anchors over the same files, as
ratios measured in one run (median of --runs rounds). The ratio compares equal work: the
anchors ast-grep can express (``ast_grep_rule``; a metavariable kind becomes an ast-grep
``constraints`` kind), with the matches of each anchor counted by both tools side by side.

    python bench/list_bench.py DIR            # e.g. a corpus from bench/make_corpus.py
    python bench/list_bench.py DIR --rules passes --rules skills -j 2
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.make_corpus import corpus_how  # noqa: E402
from klc import plugins  # noqa: E402
from klc.cuda.parse import parse_bytes  # noqa: E402
from klc.errors import KlcError  # noqa: E402
from klc.match import find_matches, index_nodes, pattern_of  # noqa: E402
from klc.pipeline import find_sites, spec_of  # noqa: E402
from klc.rule import RuleSet  # noqa: E402


def sources(folder: Path) -> list[tuple[str, bytes]]:
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".cu", ".cuh") and p.is_file())
    return [(str(p), p.read_bytes()) for p in files]


def time_klc_list(files: list[tuple[str, bytes]], rules: list) -> tuple[float, int]:  # type: ignore[type-arg]
    """klc's listing in one process, the work ``klc list`` does per file: parse, the file's
    klc-spec (the guards read its block size; a broken one is no spec, as in the command),
    matching, context and guards."""
    t0 = time.perf_counter()
    n = 0
    for path, data in files:
        unit = parse_bytes(data, path)
        try:
            spec = spec_of(unit)
        except KlcError:
            spec = None
        n += sum(1 for s in find_sites(unit, rules, spec=spec, clang=False) if s.ok)
    return time.perf_counter() - t0, n


def time_plain_match(files: list[tuple[str, bytes]], patterns: list  # type: ignore[type-arg]
                     ) -> tuple[float, list[int]]:
    """klc's matcher alone (parse, candidates, anchors; no context, no guards): seconds, and
    the matches of each pattern."""
    types = {p.root_type for p in patterns}
    counts = [0] * len(patterns)
    t0 = time.perf_counter()
    for path, data in files:
        unit = parse_bytes(data, path)
        cands = index_nodes(unit, types)
        for i, p in enumerate(patterns):
            counts[i] += sum(1 for _ in find_matches(p, unit, None, cands))
    return time.perf_counter() - t0, counts


def time_klc_command(folder: Path, rule_paths: list[str], jobs: int) -> tuple[float, int]:
    """``klc list --tree-only DIR -j N`` as a user runs it (a new process; the listing to a
    file): seconds, and the sites it printed."""
    cmd = [sys.executable, "-m", "klc", "list", "--tree-only", "-j", str(jobs)]
    for r in rule_paths:
        cmd += ["--skills", r]
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.run([*cmd, str(folder)], stdout=out, stderr=subprocess.PIPE,
                              check=False, cwd=ROOT)
        elapsed = time.perf_counter() - t0
        out.seek(0)
        sites = sum(1 for line in out if not line.startswith(b"    "))
    if proc.returncode != 0:
        raise SystemExit(f"klc list failed ({proc.returncode}): {proc.stderr[-300:]!r}")
    return elapsed, sites


def time_klc_list_jobs(folder: Path, rule_paths: list[str], jobs: int) -> tuple[float, int]:
    """`klc list DIR -j N --tree-only` through its Python API (klc.batch.listing), files read by
    the workers."""
    from klc.batch.listing import kernel_files, list_paths

    paths, _ = kernel_files([str(folder)])
    t0 = time.perf_counter()
    n = sum(sum(1 for s in lst.sites if s["applicable"])
            for lst in list_paths(paths, rule_paths, tree_only=True, jobs=jobs))
    return time.perf_counter() - t0, n


_STMT_RUN = re.compile(r"\$\$\$([A-Za-z_]\w*)\s*;")
_FOR_INIT = re.compile(r"^\s*for\s*\(\s*\$[A-Za-z_]\w*\s*;")


_SG_KINDS = {"identifier": {"kind": "identifier"},
             "constant": {"any": [{"kind": k} for k in ("number_literal", "char_literal",
                                                        "true", "false")]}}


def ast_grep_doc(anchor: str, pattern: Any, kinds: tuple[tuple[str, str], ...] = ()
                 ) -> tuple[dict[str, Any] | None, str]:
    """``ast_grep_rule``, with the metavariables' kinds as ast-grep ``constraints``."""
    rule, how = ast_grep_rule(anchor, pattern)
    if rule is None:
        return None, how
    doc: dict[str, Any] = {"rule": rule}
    if kinds:
        doc["constraints"] = {name: _SG_KINDS[kind] for name, kind in kinds}
        how += ", constraints"
    return doc, how


def ast_grep_rule(anchor: str, pattern: Any) -> tuple[dict[str, Any] | None, str]:
    """The ast-grep (C++ grammar) rule that finds what a klc anchor finds, and how it was
    written; None and why when ast-grep cannot express it.

    - a run of several statements: an ast-grep pattern is one node (not expressible);
    - ``$$$X;`` is klc's idiom for a run of statements: ``$$$X`` in ast-grep;
    - ``for ($INIT; ...)``: klc ignores ``;`` and ``,`` tokens, so that ``$INIT`` binds a
      declaration (which owns its ``;``); ast-grep's default ("smart") strictness would
      require the ``;`` as a child of the loop: ``relaxed`` strictness;
    - CUDA qualifiers (``__global__``, ``__shared__``) are not C++: the C++ grammar parses
      them as type names and the rest of the line as errors, so no pattern matches; the
      same node kinds and qualifier are asked for with kind/has/regex rules instead.
    """
    if pattern.is_sequence:
        return None, "a run of statements (an ast-grep pattern is one node)"
    code = " ".join(_STMT_RUN.sub(r"$$$\1", anchor).split())
    if code.startswith("__shared__ ") and pattern.root_type == "declaration":
        dims = anchor.count("[")
        decl: dict[str, Any] = {"field": "declarator", "kind": "array_declarator"}
        inner = decl
        for _ in range(dims - 1):
            inner["has"] = {"field": "declarator", "kind": "array_declarator"}
            inner = inner["has"]
        return ({"kind": "declaration",
                 "all": [{"has": {"field": "type", "regex": "^__shared__$"}}, {"has": decl}]},
                f"kind rule: a __shared__ declaration of a {dims}-D array")
    if code.startswith("__global__ ") and pattern.root_type == "function_definition":
        return ({"kind": "function_definition",
                 "all": [{"has": {"field": "type", "regex": "^__global__$"}},
                         {"has": {"field": "body", "kind": "compound_statement"}}],
                 "not": {"has": {"kind": "storage_class_specifier"}}},
                "kind rule: a __global__ function definition")
    if _FOR_INIT.match(anchor):
        return {"pattern": {"context": code, "strictness": "relaxed"}}, "pattern, relaxed"
    return {"pattern": code}, "pattern"


def time_ast_grep(folder: Path, rules: list[tuple[str, dict[str, Any]]],
                  threads: int) -> tuple[float, dict[str, int]] | None:
    """ast-grep over the same files with the given rules (C++ grammar; .cu and .cuh mapped
    to it through sgconfig's languageGlobs, which ast-grep needs to see them): seconds and
    the matches of each rule id."""
    # next to this Python first (a venv's bin/ need not be on PATH); never a bare `sg`, which
    # on many systems is util-linux's "execute as another group", not ast-grep
    local = Path(sys.executable).parent / "ast-grep"
    exe = str(local) if local.exists() else shutil.which("ast-grep")
    if exe is None or not rules:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "sgconfig.yml"
        (Path(tmp) / "rules").mkdir()
        cfg.write_text('ruleDirs: [rules]\nlanguageGlobs:\n  cpp: ["*.cu", "*.cuh"]\n')
        for rid, rule in rules:
            doc = {"id": rid, "language": "cpp", "severity": "info", **rule}
            (Path(tmp) / "rules" / f"{rid}.yml").write_text(json.dumps(doc))
        cmd = [exe, "scan", "-c", str(cfg), "--json=stream", "--threads", str(threads),
               str(folder.resolve())]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        print(f"ast-grep failed: {proc.stderr.strip()[:300]}", file=sys.stderr)
        return None
    hits = {rid: 0 for rid, _ in rules}
    for line in proc.stdout.splitlines():
        if line.strip():
            hits[json.loads(line)["ruleId"]] += 1
    return elapsed, hits


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--rules", action="append", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=2,
                    help="also time klc list with this many worker processes (default 2)")
    ap.add_argument("--runs", type=int, default=3,
                    help="rounds of every measurement, alternating; medians reported (3)")
    args = ap.parse_args()
    rule_paths = args.rules or [str(ROOT / "skills")]
    plugins.load()
    rules = list(RuleSet.load(rule_paths).rules)
    gc.freeze()  # as the klc command does (klc.interrupts.tune_gc)
    gc.set_threshold(50_000, 20, 100)
    files = sources(args.dir)
    if not files:
        print(f"{args.dir}: no .cu/.cuh files", file=sys.stderr)
        return 2
    mb = sum(len(d) for _, d in files) / 1e6
    anchors: dict[str, tuple[str, Any, Any]] = {}  # pattern key -> (first rule, pattern, kinds)
    for r in rules:
        anchors.setdefault(pattern_of(r).key, (r.name, pattern_of(r), r.metavar_kinds))
    table: list[tuple[str, Any, str, dict[str, Any] | None]] = []
    for i, (name, pattern, kinds) in enumerate(anchors.values()):
        sg_rule, how = ast_grep_doc(pattern.code, pattern, kinds)
        table.append((f"a{i:02d}_{name}", pattern, how, sg_rule))
    same = [(rid, p, rule) for rid, p, _how, rule in table if rule is not None]
    for path, data in files[:20]:  # warm caches: compiled patterns and queries
        find_sites(parse_bytes(data, path), rules, clang=False)
    runs: dict[str, list[float]] = {}
    for _ in range(max(1, args.runs)):
        t_list, n_list = time_klc_list(files, rules)
        t_plain, n_plain = time_plain_match(files, [p for _, p, _, _ in table])
        t_same, n_same = time_plain_match(files, [p for _, p, _ in same])
        t_jobs, n_jobs = time_klc_list_jobs(args.dir, rule_paths, args.jobs)
        t_cmd1, n_cmd = time_klc_command(args.dir, rule_paths, 1)
        t_cmdj, _ = time_klc_command(args.dir, rule_paths, args.jobs)
        sg = time_ast_grep(args.dir, [(rid, rule) for rid, _, rule in same], 1)  # one thread
        sg_all = time_ast_grep(args.dir, [(rid, rule) for rid, _, rule in same], 0)
        for key, t in (("list", t_list), ("plain", t_plain), ("same", t_same),
                       ("jobs", t_jobs), ("cmd1", t_cmd1), ("cmdj", t_cmdj),
                       ("sg", sg[0] if sg else 0.0),
                       ("sg_all", sg_all[0] if sg_all else 0.0)):
            runs.setdefault(key, []).append(t)
    med = {k: statistics.median(v) for k, v in runs.items()}
    n = len(files)
    print(f"# corpus: {corpus_how(args.dir)}")
    print(f"files: {n}  MB: {mb:.1f}  rules: {len(rules)}  distinct anchors: {len(table)}  "
          f"runs: {len(runs['list'])} (medians)")
    print(f"{'what':<48}{'seconds':>9}{'files/s':>10}{'matches':>9}")

    def row(what: str, t: float, matches: int) -> None:
        print(f"{what:<48}{t:>9.2f}{n / t:>10.0f}{matches:>9}")

    row("the command: klc list --tree-only DIR -j 1", med["cmd1"], n_cmd)
    row(f"the command: klc list --tree-only DIR -j {args.jobs}", med["cmdj"], n_cmd)
    row("API, one process: parse+match+context+guards", med["list"], n_list)
    row(f"API, list_paths with {args.jobs} workers", med["jobs"], n_jobs)
    row("klc plain matching, every anchor", med["plain"], sum(n_plain))
    row(f"klc plain matching, {len(same)} anchors ast-grep takes", med["same"], sum(n_same))
    if sg is None:
        print("ast-grep: not run (not installed, or it refused a rule)")
        return 0
    row(f"ast-grep scan -j1, the same {len(same)} anchors", med["sg"], sum(sg[1].values()))
    if sg_all is not None:
        row("ast-grep scan (its default threads)", med["sg_all"], sum(sg_all[1].values()))
    print(f"ratio (one thread each, equal work) klc plain matching / ast-grep: "
          f"{med['same'] / med['sg']:.2f}x   klc list (all rules) / ast-grep: "
          f"{med['list'] / med['sg']:.2f}x")
    print(f"{'anchor (first rule using it)':<36}{'klc':>8}{'ast-grep':>10}  how")
    klc_counts = dict(zip([rid for rid, _, _ in same], n_same, strict=True))
    for (rid, _p, how, _rule), count in zip(table, n_plain, strict=True):
        sg_count = f"{sg[1][rid]}" if rid in sg[1] else "-"
        assert rid not in klc_counts or klc_counts[rid] == count
        print(f"{rid:<36}{count:>8}{sg_count:>10}  {how}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

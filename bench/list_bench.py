"""Benchmark `klc list` with the whole rule library over a folder of kernel files.

Prints the wall and CPU seconds, peak memory and files/s of the command itself, end to end
(``klc list DIR -j 1`` with libclang where a guard asks, ``--tree-only`` at ``-j 1``, at
``-j N`` and without ``-j`` (its default workers, against ast-grep's default threads), each
run as a user runs it: a new process, walk, workers, the listing written to a
file; the result cache empty and the compiled rule library cached, as on any run after the
first; once with no cache at all, and once with the result cache warm), of klc's listing in
one process through its API (parse, match, context, guards with tree-sitter facts only; nothing
printed), of the plain anchor matching alone, and of ast-grep (``ast-grep-cli`` from PyPI,
C++ language) scanning the same files with the anchors it can express, as ratios measured in
one run: of the medians of --runs rounds, each round's own (ast-grep's one-thread scan
runs between the two klc commands it is compared with, as this machine's speed drifts), and
of each command's fastest round (the one other load slowed least). The
anchors ast-grep takes are ``ast_grep_rule``'s (a metavariable kind becomes an ast-grep
``constraints`` kind), with the matches of each anchor counted by both tools side by side.

    python bench/list_bench.py DIR            # e.g. a corpus from bench/make_corpus.py
    python bench/list_bench.py DIR --rules passes --rules skills -j 2
    python bench/list_bench.py DIR --commands-only --runs 3   # the commands' rows only
    python bench/list_bench.py DIR --count [--every 10]       # instructions, by valgrind
    python bench/list_bench.py DIR --klc-only -j 8            # klc's commands alone (a
                                                              # machine without ast-grep)
    python bench/list_bench.py DIR --scaling 1,2,4,8,16       # -j N against ast-grep's
                                                              # --threads N, wall clock

``--scaling`` times ``klc list --tree-only DIR -j N`` (the rule library cached, the result
cache empty) and ast-grep's scan with ``--threads N`` for each N given, alternating, --runs
rounds: the wall seconds (medians), each tool's speed-up over its own one-process run, and
the ratio of the two at each N.

``--count`` counts instructions instead, the figure that does not move with the machine's
load (to compare two commits by): one process under valgrind's callgrind loads the rule
library, reads every ``--every``-th file (10th when not given), parses them once uncounted,
then counts a bare tree-sitter parse of them and klc's listing of them (``--tree-only``, the
applicable sites, each file as ``klc list`` lists it: ``klc.batch.listing``), the listing's
first pass, with the costs a command pays on its first files. Then the two commands the
rounds time, whole, over those files: ``klc list --tree-only -j 1`` (a run after the first:
bytecode written, rule library compiled) and ast-grep's one-thread scan, each every
instruction of its process (ast-grep must be installed). Their ratio is not the time's: an
instruction of CPython's interpreter and one of a Rust program take different time.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.callgrind import count_calls, count_command  # noqa: E402
from bench.make_corpus import corpus_how  # noqa: E402
from klc import plugins  # noqa: E402
from klc.cuda.parse import parse_bytes  # noqa: E402
from klc.errors import KlcError  # noqa: E402
from klc.match import find_matches, index_nodes, pattern_of  # noqa: E402
from klc.pipeline import find_sites, spec_of  # noqa: E402
from klc.rule import RuleSet  # noqa: E402
from klc.rule.model import METAVAR_KINDS  # noqa: E402


def sources(folder: Path) -> list[tuple[str, bytes]]:
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".cu", ".cuh") and p.is_file())
    return [(str(p), p.read_bytes()) for p in files]


def time_klc_list(files: list[tuple[str, bytes]], rules: list) -> tuple[float, int]:  # type: ignore[type-arg]
    """klc's listing in one process, the work ``klc list --tree-only`` does per file: parse,
    the file's klc-spec (the guards read its block size; a broken one is no spec, as in the
    command), matching, context and guards, the applicable sites only (no ``--all``)."""
    t0 = time.perf_counter()
    n = 0
    for path, data in files:
        unit = parse_bytes(data, path)
        try:
            spec = spec_of(unit)
        except KlcError:
            spec = None
        n += len(find_sites(unit, rules, spec=spec, clang=False, refused=False))
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


class Ran(NamedTuple):
    """A child process's wall and CPU seconds (user + system) and peak memory (MB)."""

    wall: float
    cpu: float
    mb: float


def run_child(cmd: list[str], out: Any, env: dict[str, str] | None = None
              ) -> tuple[Ran, int, bytes]:
    """Run a command (its stdout to ``out``), timed, with its own resource usage (wait4)
    and peak memory: the high-water mark of its resident set (``VmHWM``, read while it runs;
    ``ru_maxrss`` would count the pages of this process it was forked from): what it took,
    its exit status and the end of its stderr. The peak of the main process (``-j N``: the
    parent of the workers)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT, env=env)
        peak = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _vm_hwm(proc.pid))
            time.sleep(0.02)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read()[-300:]
    return Ran(elapsed, usage.ru_utime + usage.ru_stime, peak / 1024), proc.returncode, tail


def _vm_hwm(pid: int) -> int:
    """The peak resident set of a running process in KB (0 where /proc cannot tell)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def time_klc_command(folder: Path, rule_paths: list[str], jobs: int | None,
                     tree_only: bool = True,
                     cache: Path | None = None, library: Path | None = None
                     ) -> tuple[Ran, int]:
    """``klc list [--tree-only] DIR -j N`` (``jobs`` None: without ``-j``, its default
    workers) as a user runs it (a new process; the listing to a
    file; klc's modules compiled to bytecode once, as an installed klc has them), without
    the result cache (``cache``: with it, in that folder). ``library``: a cache folder
    holding the compiled rule library (``klc.rule.cache``, as any run after the first finds
    it), copied to a fresh folder whose result cache is empty; without it, every cache is
    off (``KLC_NO_CACHE=1``: the rule library compiled, as on a first run). What it took,
    and the sites it printed. Exit 2 (a file with syntax errors, listed all the same) is a
    run."""
    cmd = [sys.executable, "-m", "klc", "list", *(["--tree-only"] if tree_only else []),
           *(["-j", str(jobs)] if jobs is not None else [])]
    for r in rule_paths:
        cmd += ["--skills", r]
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as fresh:
        if cache is None and library is None:
            env["KLC_NO_CACHE"] = "1"
        else:
            env.pop("KLC_NO_CACHE", None)
            if cache is None:
                cache = Path(fresh) / "cache"
                cache.mkdir()
                if (Path(library) / "rules").is_dir():  # type: ignore[arg-type]
                    # (a klc before the rule library's cache has none)
                    shutil.copytree(Path(library) / "rules", cache / "rules")  # type: ignore[arg-type]
            env["KLC_CACHE_DIR"] = str(cache)
        return _klc_listing(cmd, folder, env)


def _klc_listing(cmd: list[str], folder: Path, env: dict[str, str]) -> tuple[Ran, int]:
    with tempfile.TemporaryFile() as out:
        ran, code, err = run_child([*cmd, str(folder)], out, env)
        out.seek(0)
        sites = sum(1 for line in out if not line.startswith(b"    "))
    if code not in (0, 2):
        raise SystemExit(f"klc list failed ({code}): {err!r}")
    return ran, sites


def time_klc_list_jobs(folder: Path, rule_paths: list[str], jobs: int) -> tuple[float, int]:
    """`klc list DIR -j N --tree-only` through its Python API (klc.batch.listing), files read by
    the workers."""
    from klc.batch.listing import kernel_files, list_paths

    paths, _ = kernel_files([str(folder)])
    t0 = time.perf_counter()
    n = sum(sum(1 for s in lst.sites if s["applicable"])
            for lst in list_paths(paths, rule_paths, tree_only=True, jobs=jobs, cache=None))
    return time.perf_counter() - t0, n


_STMT_RUN = re.compile(r"\$\$\$([A-Za-z_]\w*)\s*;")
_FOR_INIT = re.compile(r"^\s*for\s*\(\s*\$[A-Za-z_]\w*\s*;")


# a metavariable kind as an ast-grep constraint: the node kinds it allows (a type kind such as
# ``pointer`` is judged on each match by klc's guards, not by the plain matcher: no constraint)
_SG_KINDS = {kind: {"any": [{"kind": k} for k in sorted(types)]}
             for kind, types in METAVAR_KINDS.items() if types is not None}


def ast_grep_doc(anchor: str, pattern: Any, kinds: tuple[tuple[str, str], ...] = ()
                 ) -> tuple[dict[str, Any] | None, str]:
    """``ast_grep_rule``, with the metavariables' kinds as ast-grep ``constraints``."""
    rule, how = ast_grep_rule(anchor, pattern)
    if rule is None:
        return None, how
    doc: dict[str, Any] = {"rule": rule}
    if kinds:
        constraints = {name: _SG_KINDS[kind] for name, kind in kinds if kind in _SG_KINDS}
        if constraints:
            doc["constraints"] = constraints
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


def ast_grep_exe() -> str | None:
    """ast-grep's executable: next to this Python first (a venv's bin/ need not be on PATH);
    never a bare `sg`, which on many systems is util-linux's "execute as another group"."""
    local = Path(sys.executable).parent / "ast-grep"
    return str(local) if local.exists() else shutil.which("ast-grep")


def ast_grep_config(tmp: Path, rules: list[tuple[str, dict[str, Any]]]) -> Path:
    """An sgconfig.yml in ``tmp`` with the rules (C++ grammar; .cu and .cuh mapped to it
    through languageGlobs, which ast-grep needs to see them)."""
    cfg = tmp / "sgconfig.yml"
    (tmp / "rules").mkdir()
    cfg.write_text('ruleDirs: [rules]\nlanguageGlobs:\n  cpp: ["*.cu", "*.cuh"]\n')
    for rid, rule in rules:
        doc = {"id": rid, "language": "cpp", "severity": "info", **rule}
        (tmp / "rules" / f"{rid}.yml").write_text(json.dumps(doc))
    return cfg


def ast_grep_rules(rules: list[Any]) -> list[tuple[str, Any, str, dict[str, Any] | None]]:
    """Each distinct anchor of the rules (the first rule using it names it): its id, pattern,
    how ast-grep takes it, and the ast-grep rule (None where ast-grep cannot express it)."""
    anchors: dict[str, tuple[str, Any, Any]] = {}  # pattern key -> (first rule, pattern, kinds)
    for r in rules:
        anchors.setdefault(pattern_of(r).key, (r.name, pattern_of(r), r.metavar_kinds))
    table: list[tuple[str, Any, str, dict[str, Any] | None]] = []
    for i, (name, pattern, kinds) in enumerate(anchors.values()):
        sg_rule, how = ast_grep_doc(pattern.code, pattern, kinds)
        table.append((f"a{i:02d}_{name}", pattern, how, sg_rule))
    return table


def time_ast_grep(folder: Path, rules: list[tuple[str, dict[str, Any]]],
                  threads: int) -> tuple[Ran, dict[str, int]] | None:
    """ast-grep over the same files with the given rules (C++ grammar; .cu and .cuh mapped
    to it through sgconfig's languageGlobs, which ast-grep needs to see them): seconds and
    the matches of each rule id."""
    exe = ast_grep_exe()
    if exe is None or not rules:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        cfg = ast_grep_config(Path(tmp), rules)
        cmd = [exe, "scan", "-c", str(cfg), "--json=stream", "--threads", str(threads),
               str(folder.resolve())]
        with tempfile.TemporaryFile() as out:
            ran, code, err = run_child(cmd, out)
            out.seek(0)
            stdout = out.read().decode()
    if code not in (0, 1):
        print(f"ast-grep failed: {err.decode(errors='replace').strip()}", file=sys.stderr)
        return None
    hits = {rid: 0 for rid, _ in rules}
    for line in stdout.splitlines():
        if line.strip():
            hits[json.loads(line)["ruleId"]] += 1
    return ran, hits


def count_instructions(folder: Path, rule_paths: list[str], every: int) -> int:
    """``--count``: the instructions of a bare parse and of klc's listing of every
    ``every``-th file, by valgrind's callgrind (module doc; ``bench.callgrind``)."""
    plugins.load()  # (the compiled rule library in the cache, as a command finds it: a
    RuleSet.load(rule_paths)  # library compiled in the counted process is laid out otherwise)
    argv = [__file__, str(folder), "--every", str(every), "--counted"]
    for r in rule_paths:
        argv += ["--rules", r]
    got = count_calls(argv, 2, "list_bench")
    if got is None:
        return 2
    (bare, listing), printed = got
    print(f"# corpus: {corpus_how(folder)}; every {every}th file: {printed.strip()}")
    print("counted: instructions (valgrind's callgrind), one run of each")
    print(f"bare tree-sitter parse of the files          {bare:>16,}  1.00x")
    print(f"klc's listing of them (--tree-only, 1st pass) {listing:>15,}  "
          f"{listing / bare:.2f}x the bare parse")
    commands = count_commands(folder, rule_paths, every)
    if commands is None:
        return 2
    klc_cmd, sg_cmd = commands
    print(f"the command klc list --tree-only -j 1 of them {klc_cmd:>15,}  "
          f"{klc_cmd / sg_cmd:.2f}x ast-grep's scan")
    print(f"the command ast-grep scan --threads 1 of them {sg_cmd:>15,}  1.00x")
    return 0


def count_commands(folder: Path, rule_paths: list[str], every: int) -> tuple[int, int] | None:
    """The instructions of the two commands the timed rounds compare, over a folder of every
    ``every``-th file: ``klc list --tree-only -j 1`` as a run after the first runs it (its
    bytecode written and the rule library compiled by a run before, the result cache
    empty), and ast-grep's one-thread scan with the anchors it can express. Not the time:
    a Python interpreter and a Rust program do different work per instruction, and the two
    ratios differ (``bench/results/list_bench.txt``)."""
    exe = ast_grep_exe()
    if exe is None:
        print("list_bench: --count compares with ast-grep, which is not installed",
              file=sys.stderr)
        return None
    same = [(rid, rule) for rid, _, _, rule in ast_grep_rules(list(RuleSet.load(rule_paths).rules))
            if rule is not None]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "files"
        work.mkdir()
        for i, (path, data) in enumerate(sources(folder)[::every]):
            (work / f"{i:05d}_{Path(path).name}").write_bytes(data)
        (Path(tmp) / "sg").mkdir()
        cfg = ast_grep_config(Path(tmp) / "sg", same)
        env = dict(os.environ, KLC_CACHE_DIR=str(Path(tmp) / "cache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("KLC_NO_CACHE", None)
        cmd = [sys.executable, "-m", "klc", "list", "--tree-only", "-j", "1"]
        for r in rule_paths:
            cmd += ["--skills", r]
        cmd.append(str(work))
        subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)  # (bytecode, rule library)
        shutil.rmtree(Path(tmp) / "cache" / "list", ignore_errors=True)
        klc_cmd = count_command(cmd, "list_bench", env=env, cwd=ROOT, ok=(0, 2))
        sg_cmd = count_command([exe, "scan", "-c", str(cfg), "--json=stream", "--threads", "1",
                                str(work)], "list_bench", ok=(0, 1))
    if klc_cmd is None or sg_cmd is None:
        return None
    return klc_cmd, sg_cmd


def counted_runs(folder: Path, rule_paths: list[str], every: int) -> int:
    """The process ``count_instructions`` runs under valgrind: the two counted runs."""
    from klc.batch import listing as lst
    from klc.cuda.syntax import parser

    files = sources(folder)[::every]
    if not files:
        print(f"{folder}: no .cu/.cuh files", file=sys.stderr)
        return 2
    lst._load(rule_paths)
    lst._init(rule_paths, tree_only=True, show_all=False, json_sites=False, render="plain",
              refused=False)

    def bare() -> None:
        p = parser()
        for _, data in files:
            p.parse(data)

    def listing() -> None:
        for path, data in files:
            lst._list_source(path, data)

    bare()  # (imports, the parser)
    sys.call_tracing(bare, ())
    sys.call_tracing(listing, ())
    print(f"{len(files)} files, {sum(len(d) for _, d in files) / 1e6:.2f} MB")
    return 0


def _ast_grep_rows(row: Any, runs: dict[str, list[Any]], counts: dict[str, Any], anchors: int,
                   med: Any) -> None:
    """ast-grep's rows and klc's ratios to it: of the medians, of each round (ast-grep's scan
    runs between the two klc commands it is compared with), of each command's fastest round."""
    hits = sum(counts["sg"].values())
    row(f"ast-grep scan -j1, the same {anchors} anchors", "sg", hits)
    row("ast-grep scan (its default threads)", "sg_all", hits)
    for what in ("wall", "cpu"):
        print(f"ratios ({what}, of the medians): klc list / ast-grep -j1: "
              f"{med('cmd', what) / med('sg', what):.2f}x (target <= 3)   --tree-only / ast-grep: "
              f"{med('cmd1', what) / med('sg', what):.2f}x (target <= 2)")
    if len(runs["sg"]) < 2:
        return

    def rounds(key: str) -> str:
        got = sorted(a.cpu / b.cpu for a, b in zip(runs[key], runs["sg"], strict=True))
        return f"{statistics.median(got):.2f}x (rounds: {', '.join(f'{r:.2f}' for r in got)})"
    print(f"ratios (cpu, each round's, their median): klc list / ast-grep -j1: "
          f"{rounds('cmd')}   --tree-only / ast-grep: {rounds('cmd1')}")

    def fastest(key: str) -> float:  # (the round the machine's other load slowed least)
        return min(t.cpu for t in runs[key])
    print(f"ratios (cpu, of each command's fastest round): klc list / ast-grep -j1: "
          f"{fastest('cmd') / fastest('sg'):.2f}x   --tree-only / ast-grep: "
          f"{fastest('cmd1') / fastest('sg'):.2f}x")


def scaling(folder: Path, rule_paths: list[str], levels: list[int], runs: int,
            klc_only: bool) -> int:
    """``--scaling``: klc's listing with N workers and ast-grep with N threads, at each N."""
    plugins.load()
    rules = list(RuleSet.load(rule_paths).rules)
    table = ast_grep_rules(rules)
    sg_rules = [(rid, rule) for rid, _p, _how, rule in table if rule is not None]
    levels = sorted(set(levels) | {1})
    klc: dict[int, list[Ran]] = {n: [] for n in levels}
    sg: dict[int, list[Ran]] = {n: [] for n in levels}
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as warm:
        time_klc_command(folder, rule_paths, 1, cache=Path(warm))  # (the library cached)
        for _ in range(runs):
            for n in levels:
                klc[n].append(time_klc_command(folder, rule_paths, n, library=Path(warm))[0])
                if not klc_only:
                    got = time_ast_grep(folder, sg_rules, n)
                    if got is None:
                        print("ast-grep: not run (not installed, or it refused a rule; "
                              "--klc-only times klc alone)", file=sys.stderr)
                        return 2
                    sg[n].append(got[0])

    def med(runs_: list[Ran], what: str = "wall") -> float:
        return statistics.median(getattr(r, what) for r in runs_)

    k1 = med(klc[1])
    print(f"# corpus: {corpus_how(folder)}; {len(rules)} rules, ast-grep given "
          f"{len(sg_rules)} anchors; {os.cpu_count()} CPUs; {runs} rounds (medians: wall "
          "seconds, and the CPU seconds of all processes and threads)")
    print(f"{'N':>4}{'klc -j N':>10}{'speed-up':>10}{'cpu s':>8}" + (
        "" if klc_only else
        f"{'ast-grep':>10}{'speed-up':>10}{'cpu s':>8}{'klc/ast-grep':>14}"))
    for n in levels:
        k = med(klc[n])
        line = f"{n:>4}{k:>10.2f}{k1 / k:>9.2f}x{med(klc[n], 'cpu'):>8.2f}"
        if not klc_only:
            g, g1 = med(sg[n]), med(sg[1])
            line += f"{g:>10.2f}{g1 / g:>9.2f}x{med(sg[n], 'cpu'):>8.2f}{k / g:>13.2f}x"
        print(line)
    print(f"load average (1 min) at the start and end: {load0:.2f}, {os.getloadavg()[0]:.2f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--rules", action="append", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=2,
                    help="also time klc list with this many worker processes (default 2)")
    ap.add_argument("--runs", type=int, default=3,
                    help="rounds of every measurement, alternating; medians reported (3)")
    ap.add_argument("--commands-only", action="store_true",
                    help="time the commands (klc list, ast-grep) only, not the API rows")
    ap.add_argument("--klc-only", action="store_true",
                    help="time klc's commands alone, ast-grep neither run nor compared (a "
                    "machine without it: the -j speed-up and each command's figures)")
    ap.add_argument("--count", action="store_true",
                    help="count the instructions of a bare parse and of klc's listing instead "
                    "(valgrind's callgrind)")
    ap.add_argument("--every", type=int, default=10, metavar="N",
                    help="--count: only every N-th file, sorted by path (10)")
    ap.add_argument("--counted", action="store_true", help=argparse.SUPPRESS)  # (--count's)
    ap.add_argument("--scaling", metavar="N,N,...",
                    help="time klc list --tree-only -j N and ast-grep --threads N at each N")
    args = ap.parse_args()
    rule_paths = args.rules or [str(ROOT / "skills")]
    if args.scaling is not None:
        try:
            levels = [int(x) for x in args.scaling.split(",")]
        except ValueError:
            levels = []
        if not levels or min(levels) < 1 or not args.dir.is_dir():
            print("list_bench: --scaling takes a folder and worker counts of 1 or more, "
                  "as 1,2,4", file=sys.stderr)
            return 2
        return scaling(args.dir, rule_paths, levels, max(1, args.runs), args.klc_only)
    if args.count or args.counted:
        if args.every < 1 or not args.dir.is_dir():
            print("list_bench: --count takes a folder and --every 1 or more", file=sys.stderr)
            return 2
        return counted_runs(args.dir, rule_paths, args.every) if args.counted else \
            count_instructions(args.dir, rule_paths, args.every)
    plugins.load()
    rules = list(RuleSet.load(rule_paths).rules)
    gc.freeze()  # as the klc command does (klc.interrupts.tune_gc)
    gc.set_threshold(50_000, 20, 100)
    files = sources(args.dir)
    if not files:
        print(f"{args.dir}: no .cu/.cuh files", file=sys.stderr)
        return 2
    mb = sum(len(d) for _, d in files) / 1e6
    table = ast_grep_rules(rules)
    same = [(rid, p, rule) for rid, p, _how, rule in table if rule is not None]
    for path, data in files[:20]:  # warm caches: compiled patterns and queries
        find_sites(parse_bytes(data, path), rules, clang=False)
    sg_rules = [(rid, rule) for rid, _, rule in same]
    runs: dict[str, list[Any]] = {}
    counts: dict[str, Any] = {}
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as warm:
        # (fills the result cache and the rule library's, and writes klc's bytecode)
        time_klc_command(args.dir, rule_paths, 1, tree_only=False, cache=Path(warm))
        lib = Path(warm)
        for _ in range(max(1, args.runs)):
            # (ast-grep's scan between the two klc commands it is compared with: this
            # machine's speed drifts by the minute, and each round gives its own ratios)
            got: dict[str, tuple[Any, Any]] = {
                "cmd1": time_klc_command(args.dir, rule_paths, 1, library=lib)}
            if not args.klc_only:
                sg = time_ast_grep(args.dir, sg_rules, 1)  # one thread
                if sg is None:
                    print("ast-grep: not run (not installed, or it refused a rule; "
                          "--klc-only times klc alone)", file=sys.stderr)
                    return 2
                got["sg"] = sg
            got["cmd"] = time_klc_command(args.dir, rule_paths, 1, tree_only=False, library=lib)
            got["cmdj"] = time_klc_command(args.dir, rule_paths, args.jobs, library=lib)
            got["auto"] = time_klc_command(args.dir, rule_paths, None, library=lib)
            got["cold"] = time_klc_command(args.dir, rule_paths, 1)
            got["warm"] = time_klc_command(args.dir, rule_paths, 1, tree_only=False,
                                           cache=Path(warm))
            if not args.klc_only:
                sg_all = time_ast_grep(args.dir, sg_rules, 0)
                if sg_all is None:
                    print("ast-grep: not run (not installed, or it refused a rule)",
                          file=sys.stderr)
                    return 2
                got["sg_all"] = sg_all
            if not args.commands_only and not args.klc_only:
                got["list"] = time_klc_list(files, rules)
                got["plain"] = time_plain_match(files, [p for _, p, _, _ in table])
                got["same"] = time_plain_match(files, [p for _, p, _ in same])
                got["jobs"] = time_klc_list_jobs(args.dir, rule_paths, args.jobs)
            for key, (t, c) in got.items():
                runs.setdefault(key, []).append(t)
                counts[key] = c
    n = len(files)

    def med(key: str, what: str = "wall") -> float:
        return statistics.median(t if isinstance(t, float) else getattr(t, what)
                                 for t in runs[key])

    print(f"# corpus: {corpus_how(args.dir)}")
    print(f"files: {n}  MB: {mb:.1f}  rules: {len(rules)}  distinct anchors: {len(table)}  "
          f"ast-grep rules: {len(same)}  runs: {len(runs['cmd'])} (medians)")
    print(f"{'what':<52}{'wall s':>8}{'cpu s':>8}{'MB':>6}{'files/s':>9}{'sites':>9}")

    def row(what: str, key: str, found: int) -> None:
        t = runs[key][0]
        cpu, mem = f"{'':>8}", f"{'':>6}"
        if isinstance(t, Ran):
            cpu = f"{med(key, 'cpu'):>8.2f}"
            mem = f"{statistics.median(r.mb for r in runs[key]):>6.0f}"
        print(f"{what:<52}{med(key):>8.2f}{cpu}{mem}{n / med(key):>9.0f}{found:>9}")

    row("klc list DIR -j 1 (libclang where a guard asks)", "cmd", counts["cmd"])
    row("klc list --tree-only DIR -j 1", "cmd1", counts["cmd1"])
    row(f"klc list --tree-only DIR -j {args.jobs}", "cmdj", counts["cmdj"])
    row("klc list --tree-only DIR (its default workers)", "auto", counts["auto"])
    row("klc list --tree-only DIR -j 1, no cache at all", "cold", counts["cold"])
    row("klc list DIR -j 1, again (the result cache)", "warm", counts["warm"])
    if not args.commands_only and not args.klc_only:
        row("API, one process: parse+match+context+guards", "list", counts["list"])
        row(f"API, list_paths with {args.jobs} workers", "jobs", counts["jobs"])
        row("klc plain matching, every anchor", "plain", sum(counts["plain"]))
        row(f"klc plain matching, {len(same)} anchors ast-grep takes", "same",
            sum(counts["same"]))
    if not args.klc_only:
        _ast_grep_rows(row, runs, counts, len(same), med)
    print(f"-j {args.jobs} speed-up over -j 1 (wall, --tree-only): "
          f"{med('cmd1') / med('cmdj'):.2f}x (target >= 1.7); the CPU seconds of -j "
          f"{args.jobs} over -j 1: {med('cmdj', 'cpu') / med('cmd1', 'cpu'):.2f}x; "
          f"{os.cpu_count()} CPUs")
    if not args.klc_only:
        print(f"as each runs by default (wall): klc list --tree-only DIR / ast-grep scan: "
              f"{med('auto') / med('sg_all'):.2f}x")
    print(f"load average (1 min) at the start and end: {load0:.2f}, {os.getloadavg()[0]:.2f}")
    if args.commands_only or args.klc_only:
        return 0
    print(f"ratio (one thread each, equal work) klc plain matching / ast-grep: "
          f"{med('same') / med('sg'):.2f}x")
    n_same, n_plain = counts["same"], counts["plain"]
    print(f"{'anchor (first rule using it)':<36}{'klc':>8}{'ast-grep':>10}  how")
    klc_counts = dict(zip([rid for rid, _, _ in same], n_same, strict=True))
    for (rid, _p, how, _rule), count in zip(table, n_plain, strict=True):
        sg_count = f"{counts['sg'][rid]}" if rid in counts["sg"] else "-"
        assert rid not in klc_counts or klc_counts[rid] == count
        print(f"{rid:<36}{count:>8}{sg_count:>10}  {how}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

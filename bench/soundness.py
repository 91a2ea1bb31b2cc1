"""Soundness on real code: does every rewrite of a file that compiled still compile?

    python bench/soundness.py [DIR ...] [--rules skills passes] [-j N] [--limit N]
                              [--json OUT] [--md OUT] [--nvcc PATH | --no-nvcc] [-I DIR ...]

Every rule of each library (``--rules``, default ``skills`` and ``passes``) is applied to every
file ALONE, then each library ALL AT ONCE (what ``klc batch`` does), through klc's own API
(``klc.pipeline.find_sites`` / ``apply_rules``). Each rewrite that changed bytes is compiled
against its original:

- NVRTC, through the gate's compile stage (``klc.gate.compile``: host code blanked, CUDA
  headers from the pip wheels), no GPU needed;
- ``nvcc -c`` on the whole translation unit (host code too), when an nvcc is on PATH or given
  by ``--nvcc``, with the include folders of the file's package.

A rewrite is BROKEN for a compiler when the original compiled and the rewrite does not;
originals that do not compile are counted and left out. Also counted: rewrites per rule, the
rewrites refused because they would not parse, lines changed outside the rule's edit spans
("outside"), and line breaks between two tokens the rewrite kept that it added or removed
("layout": the rewrite reflowed code it did not mean to change).

DIR (default ``~/.cache/klc/corpus``, made by ``bench/real_corpus.py``) is a corpus made by
that script (its ``manifest.json`` gives each package's files and include folders) or any
folder: its ``.cu``/``.cuh`` files, with the folder itself and every folder named
``include``, ``inc``, ``common`` or ``Common`` under it as include folders (``-I`` adds more).
``--limit N`` takes N files round robin over the packages (the folders given); ``--only LIST``
only the files LIST names (one path per line).

Compile results are cached by the hash of the bytes, the compiler and its options and include
folders (``~/.cache/klc/soundness``, or ``$KLC_CACHE_DIR/soundness``), so a second run
compiles only rewrites that changed. Prints a table per rule and how long it took; ``--json``
writes every broken case (file, rule, compiler, first error line, the diff) and ``--md`` a
summary for ``bench/results/``.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import difflib
import hashlib
import json
import multiprocessing as mp
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

ALL = "(all {lib})"  # the name a library's all-at-once run is counted under
COMPILERS = ("nvrtc", "nvcc")
INCLUDE_NAMES = frozenset({"include", "inc", "common", "Common"})
SOURCE_EXTS = (".cu", ".cuh")
MAX_DIFF_LINES = 60
NVCC_FLAGS = ("--expt-relaxed-constexpr", "--expt-extended-lambda", "-w")


@dataclass(frozen=True)
class Source:
    """A file to check, the package it belongs to and the folders its includes are found in
    (absolute)."""

    path: str
    package: str
    include: tuple[str, ...] = ()


@dataclass(frozen=True)
class Config:
    libraries: tuple[tuple[str, tuple[str, ...]], ...]  # (library name, rule paths)
    arch: str = "sm_90"
    nvcc: str | None = None  # path of nvcc, or None: NVRTC only
    nvcc_std: str = "c++17"
    nvcc_timeout: float = 300.0
    cache: str | None = None  # folder of compile results; None: no cache
    modes: tuple[str, ...] = ("alone", "all")
    tree_only: bool = False


# --------------------------------------------------------------------------------------
# Finding files


def corpus_sources(dirs: list[Path], extra_include: tuple[str, ...] = ()) -> list[Source]:
    """The files of the folders: a ``bench/real_corpus.py`` corpus through its manifest
    (a package's folder of one, too), any other folder by walking it."""
    out: list[Source] = []
    for d in dirs:
        d = d.expanduser().resolve()
        if d.is_file():
            out.append(Source(str(d), d.parent.name, (str(d.parent), *extra_include)))
            continue
        if not d.is_dir():
            raise SystemExit(f"soundness: {d}: no such folder")
        manifest = _manifest(d)
        if manifest is not None:
            out += _from_manifest(d, manifest, None, extra_include)
            continue
        parent = _manifest(d.parent)
        if parent is not None and any(p["folder"] == d.name for p in parent["packages"]):
            out += _from_manifest(d.parent, parent, d.name, extra_include)
            continue
        include = [str(d)] + [str(p) for p in _include_folders(d)]
        files = sorted(p for p in d.rglob("*") if p.suffix in SOURCE_EXTS and p.is_file())
        out += [Source(str(f), _group(d, f), (*include, *extra_include)) for f in files]
    return out


def _group(root: Path, f: Path) -> str:
    """A plain folder's file is counted under the folder's name and its first two levels
    (``samples/Samples/0_Introduction``): ``--limit`` takes files from each in turn."""
    parts = f.relative_to(root).parts[:-1][:2]
    return "/".join((root.name, *parts))


def _manifest(d: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads((d / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    return doc if doc.get("made_by") == "bench/real_corpus.py" else None


def _from_manifest(root: Path, manifest: dict[str, Any], only: str | None,
                   extra: tuple[str, ...]) -> list[Source]:
    out = []
    for p in manifest["packages"]:
        if only is not None and p["folder"] != only:
            continue
        base = root / p["folder"]
        include = tuple(str((base / i).resolve()) for i in p["include"]) + extra
        out += [Source(str(base / f), p["folder"], include) for f in p["files"]]
    return out


def _include_folders(d: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, _ in os.walk(d):
        dirnames.sort()
        for name in list(dirnames):
            if name in INCLUDE_NAMES:
                found.append(Path(dirpath) / name)
                dirnames.remove(name)  # not the include folders inside one
    return found


def round_robin(sources: list[Source], limit: int | None) -> list[Source]:
    """The files taken in turn from each package (the first ``limit`` of them): a run cut
    short, or limited, has seen every package."""
    if limit is None or limit > len(sources):
        limit = len(sources)
    by_pkg: dict[str, list[Source]] = defaultdict(list)
    for s in sources:
        by_pkg[s.package].append(s)
    queues = list(by_pkg.values())
    out: list[Source] = []
    i = 0
    while len(out) < limit:
        q = queues[i % len(queues)]
        k = i // len(queues)
        if k < len(q):
            out.append(q[k])
        i += 1
        if i > limit * len(queues) + len(sources):
            break
    return out


# --------------------------------------------------------------------------------------
# Compiling (cached by bytes, compiler, options, include folders)


def _first_error(log: str) -> str:
    for line in log.splitlines():
        if re.search(r"\berror\b", line, re.I):
            return line.strip()
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    return lines[0] if lines else "(no message)"


class Compiler:
    """NVRTC (the gate's compile stage) and nvcc, with a cache of results on disk."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.cache = Path(cfg.cache) if cfg.cache else None
        self._nvcc_version: str | None = None
        self._salts: dict[str, str] = {}

    def ids(self) -> dict[str, str]:
        from klc.gate.compile import nvrtc_version

        out = {"nvrtc": f"nvrtc {nvrtc_version()} -arch={self.cfg.arch}"}
        if self.cfg.nvcc:
            out["nvcc"] = f"{self.nvcc_version()} -std={self.cfg.nvcc_std} -arch={self.cfg.arch}"
        return out

    def nvcc_version(self) -> str:
        if self._nvcc_version is None:
            try:
                run = subprocess.run([self.cfg.nvcc, "--version"], capture_output=True,
                                     text=True, timeout=60)
                lines = [ln for ln in run.stdout.splitlines() if "release" in ln]
                self._nvcc_version = "nvcc " + (lines[0].split("release")[-1].strip()
                                                if lines else "unknown")
            except (OSError, subprocess.TimeoutExpired) as e:
                raise SystemExit(f"soundness: {self.cfg.nvcc}: cannot run nvcc: {e}") from None
        return self._nvcc_version

    def salt(self, compiler: str) -> str:
        """What a cached result depends on besides the bytes and the folders: the compiler,
        its options, and for NVRTC the gate's compile stage itself (its source, and the
        headers it gives NVRTC), so that a change there compiles everything again."""
        if compiler == "nvcc":
            return self.ids()["nvcc"] + " " + " ".join(NVCC_FLAGS)
        import klc.gate.compile as gc

        fingerprint = getattr(gc, "headers_fingerprint", lambda: "")()
        stage = hashlib.sha256(Path(gc.__file__).read_bytes()).hexdigest()
        return f"{self.ids()['nvrtc']} {stage} {fingerprint}"

    def _key(self, compiler: str, data: bytes, src: Source) -> str:
        h = hashlib.sha256()
        if compiler not in self._salts:
            self._salts[compiler] = self.salt(compiler)
        for part in (self._salts[compiler], os.path.dirname(src.path),
                     Path(src.path).suffix, *src.include, "\0"):
            h.update(part.encode() + b"\0")
        h.update(data)
        return h.hexdigest()

    def compile(self, compiler: str, data: bytes, src: Source) -> dict[str, Any]:
        """{"ok": bool, "error": first error line, "timeout": bool}, from the cache when
        this compile was done before."""
        path = None
        if self.cache is not None:
            key = self._key(compiler, data, src)
            path = self.cache / key[:2] / f"{key}.json"
            try:
                return json.loads(path.read_text())
            except (OSError, ValueError):
                pass
        t0 = time.perf_counter()
        res = self._nvrtc(data, src) if compiler == "nvrtc" else self._nvcc(data, src)
        res["seconds"] = round(time.perf_counter() - t0, 3)
        if path is not None and not res.get("timeout"):
            _atomic_write(path, json.dumps(res).encode())
        return res

    def _nvrtc(self, data: bytes, src: Source) -> dict[str, Any]:
        from klc.cuda.parse import parse_bytes
        from klc.errors import KlcError
        from klc.gate.compile import compile_source, prepare_device_source

        try:
            unit = parse_bytes(data, src.path)
            prepared = prepare_device_source(unit)
            include = (os.path.dirname(src.path), *src.include)
            r = compile_source(prepared.source, src.path, arch=self.cfg.arch,
                               include=include, use_cache=False)
        except KlcError as e:
            return {"ok": False, "error": str(e).splitlines()[0], "timeout": False}
        return {"ok": r.ok, "error": "" if r.ok else _first_error(r.error or r.log),
                "timeout": False}

    def _nvcc(self, data: bytes, src: Source) -> dict[str, Any]:
        """``nvcc -c`` of the bytes, written to a temporary folder under the file's own name;
        its folder comes first among the include folders, so its includes resolve as
        they would beside the original."""
        cfg = self.cfg
        with tempfile.TemporaryDirectory(prefix="klc-soundness-") as tmp:
            name = Path(src.path).name
            f = Path(tmp) / name
            f.write_bytes(data)
            cmd = [cfg.nvcc, "-c", "-x", "cu", f"-std={cfg.nvcc_std}", f"-arch={cfg.arch}",
                   *NVCC_FLAGS,
                   f"-I{os.path.dirname(src.path)}", *(f"-I{i}" for i in src.include),
                   str(f), "-o", str(Path(tmp) / "out.o")]
            try:
                run = subprocess.run(cmd, capture_output=True, text=True,
                                     timeout=cfg.nvcc_timeout, cwd=tmp)
            except subprocess.TimeoutExpired:
                return {"ok": False, "error": f"timed out after {cfg.nvcc_timeout:.0f} s",
                        "timeout": True}
            log = (run.stderr + run.stdout).replace(str(f), src.path).replace(tmp + "/", "")
        return {"ok": run.returncode == 0,
                "error": "" if run.returncode == 0 else _first_error(log), "timeout": False}


_COMPILERS: dict[Config, Compiler] = {}


def _compiler(cfg: Config) -> Compiler:
    """One per configuration and process (it asks nvcc its version once)."""
    if cfg not in _COMPILERS:
        _COMPILERS[cfg] = Compiler(cfg)
    return _COMPILERS[cfg]


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------------------
# Bytes outside the edits


_TOKEN_RE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
                       r"|[A-Za-z_]\w*|\d[\w.]*|\S", re.S)


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]


def layout_changes(old: str, new: str) -> list[str]:
    """Line breaks added or removed between two tokens that the rewrite kept side by side
    (``for (...)\\n    x;`` written back as ``for (...) x;``): each as ``"`a` `b`"``."""
    a, b = _tokens(old), _tokens(new)
    if not a or not b:
        return []
    sm = difflib.SequenceMatcher(None, [t[0] for t in a], [t[0] for t in b], autojunk=False)
    out = []
    for i, j, n in sm.get_matching_blocks():
        for k in range(n - 1):
            gap_old = old[a[i + k][2]:a[i + k + 1][1]]
            gap_new = new[b[j + k][2]:b[j + k + 1][1]]
            if gap_old.count("\n") != gap_new.count("\n"):
                out.append(f"`{a[i + k][0]}` `{a[i + k + 1][0]}`")
    return out


def outside_edits(old: bytes, new: bytes, edits: list[Any], launch: bool) -> list[int]:
    """Lines of the rewrite whose bytes are not what the rule's edits make of the original
    (``klc.rewrite.apply_edits``: each span replaced, everything else kept, a blank where
    two words would touch): bytes changed outside the edit spans. A rewrite that also
    changes the launch geometry writes it into the klc-spec block, the config arguments of
    the file's host launches and the ``dim3`` declarations they name
    (``klc.edits.host_launch.editable_spans``): those lines of the expected text may
    differ, and only those."""
    # the same edit asked twice (two uses of one parameter) is made once, as the pipeline does
    edits = list({(e.start, e.end, e.text): e for e in edits}.values())
    from klc.edits.bytes import apply_edits
    from klc.errors import KlcError

    try:
        expected = apply_edits(old, edits)
    except KlcError:
        return outside_lines(old, new, [(e.start, e.end) for e in edits])
    if launch:
        # the rule's edits made, then the launch geometry: the spec block and the config
        # arguments of the file's host launches may differ, nothing else
        from klc.cuda.parse import parse_bytes
        from klc.edits.host_launch import editable_spans
        from klc.spec import find_spec_block

        block = find_spec_block(expected)
        spans = [block] if block is not None else []
        unit = parse_bytes(expected, "expected.cu")
        spans += [span for lc in unit.launches for span in editable_spans(unit, lc)]
        return outside_lines(expected, new, spans)
    if expected == new:
        return []
    a = expected.decode("utf-8", "replace").splitlines()
    b = new.decode("utf-8", "replace").splitlines()
    bad = [j + 1 for tag, _, _, j1, j2 in
           difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
           if tag != "equal" for j in range(j1, max(j2, j1 + 1))]
    return bad or [1]


def outside_of_rounds(old: bytes, new: bytes, applied: list[Any]) -> list[int]:
    """``outside_edits`` for each round of a run (``klc.pipeline.compose``): a site judged
    again after another site's rewrite was matched, and its edits planned, in the code the
    round before it left, so each round's edits are checked against that round's text and
    the text the next round starts from (the rewrite's last round: ``new``). Lines are
    those of the round's text."""
    rounds: dict[int, tuple[bytes, list[Any], bool]] = {}
    for a in applied:  # in the order applied: the first round first
        unit = a.match.unit
        text, edits, launch = rounds.get(id(unit), (unit.source, [], False))
        rounds[id(unit)] = (text, edits + list(a.edits), launch or bool(a.launch))
    if not rounds:
        return outside_edits(old, new, [], False)
    texts = [*[r[0] for r in rounds.values()][1:], new]
    bad: list[int] = []
    for (text, edits, launch), after in zip(rounds.values(), texts, strict=True):
        bad += outside_edits(text, after, edits, launch)
    return bad


def outside_lines(old: bytes, new: bytes, spans: list[tuple[int, int]]) -> list[int]:
    """Lines of the original (1-based) that the rewrite changed although no edit span
    touches them."""
    def line_of(offset: int) -> int:
        return old.count(b"\n", 0, offset) + 1

    allowed: set[int] = set()
    for s, e in spans:
        allowed.update(range(line_of(s), line_of(max(s, e - 1)) + 1))
    a = old.decode("utf-8", "replace").splitlines(keepends=True)
    b = new.decode("utf-8", "replace").splitlines(keepends=True)
    bad = []
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2:  # lines put in between old lines i1 and i1 + 1
            if not {i1, i1 + 1} & allowed:
                bad.append(i1 + 1)
            continue
        bad += [ln for ln in range(i1 + 1, i2 + 1) if ln not in allowed]
    return bad


# --------------------------------------------------------------------------------------
# One file


_RULES: dict[tuple[Any, ...], list[tuple[str, list[Any]]]] = {}


def load_libraries(cfg: Config) -> list[tuple[str, list[Any]]]:
    """(library, its rules) for each library, loaded once per process."""
    from klc import plugins
    from klc.rule.ruleset import RuleSet

    plugins.load()  # (in each worker process too)
    key = cfg.libraries
    if key not in _RULES:
        _RULES[key] = [(name, list(RuleSet.load(paths).rules)) for name, paths in cfg.libraries]
    return _RULES[key]


def _diff(old: bytes, new: bytes, path: str) -> str:
    lines = list(difflib.unified_diff(old.decode("utf-8", "replace").splitlines(),
                                      new.decode("utf-8", "replace").splitlines(),
                                      path, path + " (rewritten)", n=2, lineterm=""))
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... ({len(lines) - MAX_DIFF_LINES} more lines)"]
    return "\n".join(lines)


def check_file(src: Source, cfg: Config) -> dict[str, Any]:
    """Apply each rule alone and each library at once to one file, and compile the
    rewrites that changed bytes against the original. Never raises on a bad file."""
    t0 = time.perf_counter()
    res: dict[str, Any] = {"path": src.path, "package": src.package, "status": "ok",
                           "reason": "", "rewrites": [], "original": {}}
    try:
        _check(src, cfg, res)
    except Exception as e:  # a bad file (or a klc bug) costs this file only
        from klc.errors import KlcError

        res["status"] = "error"
        res["reason"] = (str(e) if isinstance(e, KlcError)
                         else f"internal error: {type(e).__name__}: {e}").splitlines()[0]
    res["seconds"] = round(time.perf_counter() - t0, 3)
    return res


def _check(src: Source, cfg: Config, res: dict[str, Any]) -> None:
    from klc.cuda.parse import check_text, parse_bytes
    from klc.errors import KlcError
    from klc.pipeline import apply_rules, find_sites, spec_of

    data = Path(src.path).read_bytes()
    check_text(src.path, data)
    unit = parse_bytes(data, src.path)
    if unit.problems:
        res["status"] = "parse_failed"
        res["reason"] = unit.problems[0].describe(src.path)
        return
    spec = spec_of(unit)
    clang = not cfg.tree_only
    runs: list[tuple[str, list[Any]]] = []
    for lib, rules in load_libraries(cfg):
        sites = find_sites(unit, rules, None, spec, clang)
        ok = {s.rule.name for s in sites if s.ok}
        if not ok:
            continue
        if "alone" in cfg.modes:
            runs += [(r.name, [r]) for r in rules if r.name in ok]
        if "all" in cfg.modes:
            runs.append((ALL.format(lib=lib), rules))
    compiled: dict[bytes, dict[str, Any]] = {}  # new bytes -> results by compiler
    compilers = [c for c in COMPILERS if c == "nvrtc" or cfg.nvcc]
    comp = _compiler(cfg)
    for name, rules in runs:
        rw: dict[str, Any] = {"rule": name, "changed": False}
        res["rewrites"].append(rw)
        try:
            outcome = apply_rules(unit, rules, None, spec, clang)
        except KlcError as e:  # the rewrite would not parse: klc refused it
            rw["refused"] = str(e).splitlines()[0]
            continue
        if not outcome.changed:
            continue
        new = outcome.source
        rw["changed"] = True
        rw["sites"] = len(outcome.applied)
        rw["rules"] = sorted({a.match.rule.name for a in outcome.applied})
        rw["outside"] = outside_of_rounds(data, new, outcome.applied)
        layout: list[str] = []
        for a in outcome.applied:
            for e in a.edits:
                if e.end > e.start:
                    layout += layout_changes(data[e.start:e.end].decode("utf-8", "replace"),
                                             e.text)
        rw["layout"] = layout
        if not res["original"]:
            res["original"] = {c: comp.compile(c, data, src) for c in compilers}
        results = compiled.get(new)
        if results is None:
            results = {c: comp.compile(c, new, src) for c in compilers
                       if res["original"][c]["ok"]}
            compiled[new] = results
        rw["compile"] = results
        rw["broken"] = {c: r["error"] for c, r in results.items()
                        if not r["ok"] and not r.get("timeout")}
        rw["timeout"] = [c for c, r in results.items() if r.get("timeout")]
        if rw["broken"] or rw["outside"] or layout:
            rw["diff"] = _diff(data, new, src.path)


# --------------------------------------------------------------------------------------
# Running many files


def _init_worker(cfg: Config) -> None:
    from klc.interrupts import die_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C and SIGTERM are the driver's
    die_with_parent()  # a driver stopped by SIGTERM or SIGKILL leaves no worker compiling on
    load_libraries(cfg)


def _check_chunk(chunk: list[Source], cfg: Config) -> list[dict[str, Any]]:
    return [check_file(s, cfg) for s in chunk]


def run(sources: list[Source], cfg: Config, jobs: int = 1,
        progress: Any = None) -> list[dict[str, Any]]:
    """Check the files, in ``jobs`` processes (in this one for 1); results in input order."""
    if jobs <= 1:
        out = []
        for s in sources:
            out.append(check_file(s, cfg))
            if progress:
                progress(out[-1])
        return out
    # nvcc takes seconds a file: one file a task, so that results come back steadily
    size = 1 if cfg.nvcc else max(1, min(4, len(sources) // (jobs * 8) or 1))
    chunks = [sources[i:i + size] for i in range(0, len(sources), size)]
    results: dict[int, list[dict[str, Any]]] = {}
    ctx = mp.get_context("spawn")  # no fork after threads (the progress bar runs one)
    with cf.ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_worker,
                                initargs=(cfg,)) as pool:
        futs = {pool.submit(_check_chunk, c, cfg): i for i, c in enumerate(chunks)}
        for fut in cf.as_completed(futs):
            results[futs[fut]] = fut.result()
            if progress:
                for r in results[futs[fut]]:
                    progress(r)
    return [r for i in range(len(chunks)) for r in results[i]]


# --------------------------------------------------------------------------------------
# Summing up


def _cause(error: str) -> str:
    """An error line without its place and names: the key errors are grouped by."""
    text = re.sub(r"^.*?:\d+(?::\d+)?:\s*", "", error)
    text = re.sub(r"^.*?\(\d+\):\s*", "", text)
    text = re.sub(r"\"[^\"]*\"", "\"…\"", text)
    text = re.sub(r"'[^']*'", "'…'", text)
    return re.sub(r"\b\d+\b", "N", text).strip()


@dataclass
class RuleRow:
    rule: str
    files: int = 0  # files where it rewrote something
    refused: int = 0  # rewrites refused by klc (they would not parse)
    eligible: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COMPILERS, 0))
    broken: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COMPILERS, 0))
    timeout: int = 0
    outside: int = 0
    layout: int = 0


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts over the files: totals, a row per rule, every broken case, causes grouped."""
    rows: dict[str, RuleRow] = {}
    broken: list[dict[str, Any]] = []
    layout: list[dict[str, Any]] = []
    outside: list[dict[str, Any]] = []
    totals: Counter[str] = Counter()
    for r in results:
        totals["files"] += 1
        totals[r["status"]] += 1
        rewritten = [rw for rw in r["rewrites"] if rw.get("changed")]
        if rewritten:
            totals["files_rewritten"] += 1
            for c, o in r["original"].items():
                totals[f"original_{c}_{'ok' if o['ok'] else 'failed'}"] += 1
        for rw in r["rewrites"]:
            row = rows.setdefault(rw["rule"], RuleRow(rw["rule"]))
            if rw.get("refused"):
                row.refused += 1
                continue
            if not rw.get("changed"):
                continue
            row.files += 1
            for c, cr in rw.get("compile", {}).items():
                if cr.get("timeout"):
                    row.timeout += 1
                    continue
                row.eligible[c] += 1
                if not cr["ok"]:
                    row.broken[c] += 1
                    broken.append({"file": r["path"], "package": r["package"],
                                   "rule": rw["rule"], "rules": rw.get("rules", []),
                                   "compiler": c, "error": cr["error"],
                                   "original_compiled": True, "diff": rw.get("diff", "")})
            if rw.get("outside"):
                row.outside += 1
                outside.append({"file": r["path"], "rule": rw["rule"],
                                "lines": rw["outside"][:20], "diff": rw.get("diff", "")})
            if rw.get("layout"):
                row.layout += 1
                layout.append({"file": r["path"], "rule": rw["rule"],
                               "between": rw["layout"][:10], "diff": rw.get("diff", "")})
    causes: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], str] = {}
    for b in broken:
        k = (b["compiler"], _cause(b["error"]))
        causes[k] += 1
        example.setdefault(k, f"{b['rule']}: {b['error']}")
    rule_causes: Counter[tuple[str, str, str]] = Counter(
        (b["rule"], b["compiler"], _cause(b["error"])) for b in broken)
    return {
        "totals": dict(totals),
        "rules": [asdict(rows[k]) for k in sorted(rows, key=lambda k: (k.startswith("("), k))],
        "broken": broken, "outside": outside, "layout": layout,
        "causes": [{"compiler": c, "cause": k, "count": n, "example": example[(c, k)]}
                   for (c, k), n in causes.most_common()],
        "rule_causes": [{"rule": r, "compiler": c, "cause": k, "count": n}
                        for (r, c, k), n in rule_causes.most_common()],
    }


def markdown(summary: dict[str, Any], header: dict[str, Any], top: int = 15) -> str:
    t = summary["totals"]
    compilers = header["compilers"]
    lines = [f"# Soundness: {header['corpus']}", "",
             f"- klc commit: `{header['commit']}`; run {header['date']} on {header['host']}",
             f"- compilers: {', '.join(compilers.values())}",
             f"- rules: {header['rules']}; modes: {', '.join(header['modes'])}",
             f"- files: {t.get('files', 0)} ({t.get('parse_failed', 0)} did not parse, "
             f"{t.get('error', 0)} errors); rewritten by some rule: "
             f"{t.get('files_rewritten', 0)}",
             *(f"- originals of rewritten files that compile with {c}: "
               f"{t.get(f'original_{c}_ok', 0)} (do not: {t.get(f'original_{c}_failed', 0)}, "
               "left out)" for c in compilers),
             f"- time: {header['seconds']:.0f} s with -j {header['jobs']} "
             f"({header['seconds'] / max(1, t.get('files', 0)):.2f} s per file)", "",
             "| rule | files rewritten | refused (would not parse) | "
             + " | ".join(f"{c}: compiled orig. / broken" for c in compilers)
             + " | outside edits | layout |",
             "| --- | ---: | ---: | " + " | ".join("---:" for _ in compilers) + " | ---: | ---: |"]
    tot = Counter()
    for row in summary["rules"]:
        cells = [f"{row['eligible'][c]} / **{row['broken'][c]}**" if row["broken"][c]
                 else f"{row['eligible'][c]} / 0" for c in compilers]
        lines.append(f"| {row['rule']} | {row['files']} | {row['refused']} | "
                     + " | ".join(cells) + f" | {row['outside']} | {row['layout']} |")
        if not row["rule"].startswith("("):
            for c in compilers:
                tot[c] += row["broken"][c]
    lines += ["", "Broken (rules alone): " + ", ".join(f"{c} {tot[c]}" for c in compilers), ""]
    if summary["causes"]:
        lines += ["## Top causes (first error line, names and numbers dropped)", "",
                  "| compiler | count | cause | example |", "| --- | ---: | --- | --- |"]
        for c in summary["causes"][:top]:
            ex = c["example"].replace("|", "\\|")
            lines.append(f"| {c['compiler']} | {c['count']} | {c['cause'].replace('|', '/')} "
                         f"| {ex[:160]} |")
        lines.append("")
    return "\n".join(lines)


def print_table(summary: dict[str, Any], compilers: list[str]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Rewrites per rule (broken = the original compiled, the rewrite not)")
    table.add_column("rule")
    table.add_column("files", justify="right")
    table.add_column("refused", justify="right")
    for c in compilers:
        table.add_column(f"{c} orig ok", justify="right")
        table.add_column(f"{c} broken", justify="right")
    table.add_column("outside", justify="right")
    table.add_column("layout", justify="right")
    for row in summary["rules"]:
        cells = []
        for c in compilers:
            b = row["broken"][c]
            cells += [str(row["eligible"][c]), f"[bold red]{b}[/]" if b else "0"]
        table.add_row(row["rule"], str(row["files"]), str(row["refused"]), *cells,
                      str(row["outside"]), str(row["layout"]))
    console = Console(width=None if sys.stdout.isatty() else 160)
    console.print(table)
    if summary["causes"]:
        causes = Table(title="Top causes of broken rewrites")
        for col in ("compiler", "count", "cause"):
            causes.add_column(col, overflow="fold")
        for c in summary["causes"][:12]:
            causes.add_row(c["compiler"], str(c["count"]), c["cause"][:140])
        console.print(causes)


def _git_commit() -> str:
    """The checkout's commit, and how many files of klc/, passes/, skills/ differ from it
    (the benchmark runs the working tree)."""
    try:
        sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--",
                                "klc", "passes", "skills", "grammar"],
                               capture_output=True, text=True, timeout=30).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if not sha:
        return "unknown"
    return sha + (f" + {len(dirty)} uncommitted files in klc/, passes/, skills/, grammar/"
                  if dirty else "")


def default_cache() -> Path:
    from klc.gate.compile import cache_dir

    return cache_dir() / "soundness"


def default_corpus() -> Path:
    """Where ``bench/real_corpus.py`` puts the corpus by default."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(root) / "klc" / "corpus"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="*", type=Path,
                    help="corpus folders or files (default ~/.cache/klc/corpus)")
    ap.add_argument("--rules", nargs="+", default=["skills", "passes"],
                    help="rule libraries (folders or .rule files), each applied rule by rule "
                         "and all at once")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--only", type=Path, default=None, metavar="LIST",
                    help="check only the files named in LIST (one path per line, as the "
                    "corpus names them): a rerun of the files a change can affect")
    ap.add_argument("--limit", type=int, default=None, help="at most N files, round robin "
                    "over the packages")
    ap.add_argument("--json", type=Path, default=None, help="write every case here")
    ap.add_argument("--md", type=Path, default=None, help="write the summary here")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--nvcc", default=None, help="nvcc to use (default: the one on PATH)")
    ap.add_argument("--no-nvcc", action="store_true", help="NVRTC only")
    ap.add_argument("--nvcc-timeout", type=float, default=300.0)
    ap.add_argument("--std", default="c++17", help="nvcc's -std (default c++17)")
    ap.add_argument("-I", dest="include", action="append", default=[], type=Path,
                    help="one more include folder for every file")
    ap.add_argument("--modes", nargs="+", choices=("alone", "all"), default=["alone", "all"])
    ap.add_argument("--no-cache", action="store_true", help="compile everything again")
    ap.add_argument("--tree-only", action="store_true", help="guards on tree-sitter facts only")
    ap.add_argument("--commit", default=None, help="the commit to name in the header (for a "
                    "`git archive` snapshot, which has no git of its own)")
    ap.add_argument("--merge", type=Path, nargs="+", default=None, metavar="JSON",
                    help="no run: merge the --json files of runs over disjoint parts of one "
                    "corpus (one run split across calls with --only) into one table")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()

    def fail(msg: str) -> int:
        print(f"soundness: {msg}", file=sys.stderr)
        return 2

    if args.merge:
        try:
            return merge(args.merge, args.json, args.md)
        except (OSError, ValueError, KeyError) as e:
            return fail(f"--merge: {e}")

    if args.jobs < 1:
        return fail(f"-j {args.jobs}: give at least 1")
    if args.limit is not None and args.limit < 1:
        return fail(f"--limit {args.limit}: give at least 1")
    nvcc = None
    if not args.no_nvcc:
        nvcc = args.nvcc or shutil.which("nvcc")
        if args.nvcc and not (Path(args.nvcc).is_file() or shutil.which(args.nvcc)):
            return fail(f"--nvcc {args.nvcc}: no such program")
    for inc in args.include:
        if not inc.is_dir():
            return fail(f"-I {inc}: no such folder")
    libraries = []
    for spec in args.rules:
        p = Path(spec)
        if not p.exists():
            return fail(f"--rules {spec}: no such rule file or folder")
        libraries.append((p.stem if p.is_file() else p.name, (str(p),)))
    dirs = args.dirs or [default_corpus()]
    for d in dirs:
        if not d.expanduser().exists():
            hint = (" (make it with: python bench/real_corpus.py)" if not args.dirs else "")
            return fail(f"{d}: no such file or folder{hint}")
    for out in (args.json, args.md):
        if out is not None and not out.parent.expanduser().is_dir():
            return fail(f"{out}: its folder does not exist")
    cfg = Config(libraries=tuple(libraries), arch=args.arch, nvcc=nvcc, nvcc_std=args.std,
                 nvcc_timeout=args.nvcc_timeout,
                 cache=None if args.no_cache else str(default_cache()),
                 modes=tuple(args.modes), tree_only=args.tree_only)
    try:
        from klc.errors import KlcError
        from klc.gate.compile import check_arch

        check_arch(args.arch)
        load_libraries(cfg)  # bad rules: stop here, once
        compilers = Compiler(cfg).ids()
    except KlcError as e:
        return fail(str(e).splitlines()[0])
    sources = corpus_sources(dirs, tuple(str(i.resolve()) for i in args.include))
    if args.only is not None:
        try:
            wanted = set(args.only.read_text().split("\n")) - {""}
        except OSError as e:
            return fail(f"--only {args.only}: {e.strerror or e}")
        sources = [s for s in sources if s.path in wanted]
    sources = round_robin(sources, args.limit)
    if not sources:
        return fail("no .cu/.cuh files in " + ", ".join(map(str, dirs)))
    corpus = ", ".join(_corpus_how(d) for d in dirs)
    print(f"soundness: {len(sources)} files of {corpus}; rules {', '.join(args.rules)}; "
          f"compilers: {', '.join(compilers.values())}; -j {args.jobs}", file=sys.stderr)

    header = {"corpus": corpus, "commit": args.commit or _git_commit(),
              "date": time.strftime("%Y-%m-%d"),
              "host": f"{os.cpu_count()} cores", "compilers": compilers,
              "rules": " ".join(args.rules), "modes": args.modes, "jobs": args.jobs,
              "seconds": 0.0, "files": len(sources), "limit": args.limit}
    done: list[dict[str, Any]] = []
    last = [time.perf_counter()]

    def write(results: list[dict[str, Any]], partial: bool) -> tuple[dict[str, Any], str]:
        header["seconds"] = time.perf_counter() - t0
        summary = summarize(results)
        text = markdown(summary, {**header, "corpus": corpus + (
            f" (partial: {len(results)} of {len(sources)} files)" if partial else "")})
        if args.json:
            doc = {**header, "rule_libraries": header["rules"], "partial": partial,
                   "files_done": len(results), **summary, "results": results}
            _atomic_write(args.json.expanduser(), json.dumps(doc, indent=1).encode())
        if args.md:
            _atomic_write(args.md.expanduser(), (text + "\n").encode())
        return summary, text

    from rich.progress import Progress

    tty = sys.stderr.isatty()
    with Progress(transient=True, disable=not tty) as bar:
        task = bar.add_task("checking", total=len(sources))

        def progress(r: dict[str, Any]) -> None:
            done.append(r)
            bar.advance(task)
            now = time.perf_counter()
            if now - last[0] >= 60:  # a line (without a terminal) and the outputs so far
                last[0] = now
                summary, _ = write(done, partial=True)
                if not tty:
                    broken = sum(1 for _ in summary["broken"])
                    print(f"soundness: {len(done)}/{len(sources)} files, {now - t0:.0f} s, "
                          f"{broken} broken so far", file=sys.stderr, flush=True)

        results = run(sources, cfg, args.jobs, progress)
    summary, text = write(results, partial=False)
    seconds = header["seconds"]
    print_table(summary, list(compilers))
    print(text.split("\n\n")[1])
    print(f"soundness: {len(sources)} files in {seconds:.1f} s "
          f"({seconds / len(sources):.2f} s per file, -j {args.jobs})")
    return 0


def merge(parts: list[Path], out_json: Path | None, out_md: Path | None) -> int:
    """One table from runs over disjoint parts of a corpus: the same commit, rules, modes and
    compilers, no file twice. A part cut short (partial) is taken only when the other parts
    make up the files it was asked for (as `--only` of its missing files does)."""
    docs = [json.loads(p.read_text()) for p in parts]
    first = docs[0]
    for p, d in zip(parts, docs, strict=True):
        for key in ("commit", "rule_libraries", "modes", "compilers"):
            if d.get(key) != first.get(key):
                raise ValueError(f"{p}: {key} {d[key]!r} differs from {parts[0]}'s "
                                 f"{first[key]!r}")
    results: list[dict[str, Any]] = []
    seen: dict[str, Path] = {}
    for p, d in zip(parts, docs, strict=True):
        for r in d["results"]:
            if r["path"] in seen:
                raise ValueError(f"{r['path']} is in both {seen[r['path']]} and {p}")
            seen[r["path"]] = p
            results.append(r)
    for p, d in zip(parts, docs, strict=True):
        if d.get("partial") and len(results) < d["files"]:
            raise ValueError(f"{p}: a partial run ({d['files_done']} of {d['files']} files) and "
                             f"the parts hold {len(results)}: check the missing files with "
                             "--only and merge that part too")
    summary = summarize(results)
    header = {**first, "seconds": sum(d["seconds"] for d in docs), "files": len(results),
              "corpus": first["corpus"] + f" ({len(parts)} runs merged)",
              "jobs": "/".join(str(d["jobs"]) for d in docs),
              "rules": first.get("rule_libraries", "(not recorded in the parts)")}
    text = markdown(summary, header)
    if out_json:
        doc = {k: v for k, v in header.items() if k not in ("partial", "files_done")}
        doc.update({"partial": False, "files_done": len(results), **summary,
                    "results": results})
        _atomic_write(out_json.expanduser(), json.dumps(doc, indent=1).encode())
    if out_md:
        _atomic_write(out_md.expanduser(), (text + "\n").encode())
    print(text)
    return 0


def _corpus_how(d: Path) -> str:
    try:
        return (d.expanduser() / "CORPUS").read_text().strip()
    except OSError:
        return str(d)


if __name__ == "__main__":
    sys.exit(main())

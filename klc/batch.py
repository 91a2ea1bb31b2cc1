"""Batch rewriting of kernel trees: walk, rewrite in parallel, journal, resume, scale out.

    config = BatchConfig.from_paths(["skills"])          # rules read (and checked) once
    summary = run_batch(config, BatchOptions(roots=["src"], mode="out", out_dir="src.klc"))

The stages, in order:

1. plan    - load the rules (a rule file that fails to load stops the batch before any file
             is touched), check hole values, refuse an ``--out`` inside an input tree;
2. walk    - ``.cu``/``.cuh`` files under the roots, sorted, symbolic links followed but never
             round a loop, a file reached twice processed once, ``--exclude`` globs honoured;
3. resume  - with ``--resume``, files the journal records as done for this configuration and
             these input bytes are taken from the journal, not redone;
4. work    - each file, in worker processes (``LocalExecutor``) or Ray tasks
             (``RayExecutor``): read, parse once, apply the rules (or run the forward
             optimizer), gate the candidate against the original. A worker never raises on
             a bad file: it returns a ``FileResult`` whose status says what happened;
5. write   - on the driver only, as results stream back: each file written atomically
             (temporary file + fsync + rename), then one fsync'd line appended to the
             journal. An interrupted batch (Ctrl-C, SIGKILL) thus leaves every file either as
             it was or completely rewritten, and the journal says which.

Workers receive paths (Ray tasks: file bytes, so no shared file system is assumed) and send
back results; each worker process loads the rules once (from their text, carried in the
configuration) and parses each file once. The driver does every write, so a result is on
disk before the journal says so.

The journal is JSON lines. Every line carries the digest of the run's configuration (rule
texts, rule names, holes, gate and optimize options, output mode and folder), the file's
absolute path and the SHA-256 of its input bytes and of the bytes the run leaves for it. With
``--in-place`` a ``begin`` line (with the bytes about to be written) precedes the write and a
``done`` line follows it, so that resume can tell a completed write from one that never
happened.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klc import __version__
from klc.errors import KlcError
from klc.interrupts import end_pool, sigint_guard

if TYPE_CHECKING:
    from klc.rules import Rule

SOURCE_SUFFIXES = (".cu", ".cuh")
JOURNAL_NAME = ".klc-batch.jsonl"
TMP_SUFFIX = ".klc-tmp"  # klc.fsutil.atomic_write's temporary files end so
MODES = ("check", "diff", "out", "in_place")
WRITE_MODES = ("out", "in_place")

# Per-file statuses. The first three are successes; the others make the exit status 1.
REWRITTEN, UNCHANGED, REFUSED = "rewritten", "unchanged", "refused"
PARSE_FAILED, GATE_FAILED, ERROR = "parse_failed", "gate_failed", "error"
STATUSES = (REWRITTEN, UNCHANGED, REFUSED, PARSE_FAILED, GATE_FAILED, ERROR)
FAILED = frozenset({PARSE_FAILED, GATE_FAILED, ERROR})
MAX_REFUSED = 8  # refused sites kept with their reason per file (all are counted)
ACCEPTED_GATE_VERDICTS = frozenset({"passed", "compiled", "skipped"})
SLOWER_MARGIN = 0.02  # a gated rewrite slower than the original by more (and the noise) is not kept


# --------------------------------------------------------------------------------------
# Configuration


@dataclass(frozen=True)
class BatchConfig:
    """What is done to each file. It carries the rule files' text (not their paths), so a
    worker anywhere, on any node, loads exactly the rules the driver checked."""

    rule_files: tuple[tuple[str, str], ...]  # (path, text) of each rule file, in load order
    rule_names: tuple[str, ...] = ()  # apply only these rules (all when empty)
    holes: tuple[tuple[str, str], ...] = ()  # --hole NAME=VALUE
    gate: bool = False
    optimize: bool = False
    arch: str | None = None
    gate_timeout: float | None = None
    optimize_options: tuple[tuple[str, Any], ...] = ()  # filler, budget, target_sol
    tree_only: bool = False  # guards on tree-sitter facts only (no libclang): faster
    # the rule files named one by one (--rule FILE), not found in a library folder (--skills,
    # the default): a rule that changes results (its card's ``precision``) is applied without
    # the gate only from a named file, or when --only names it
    named_files: tuple[str, ...] = ()
    # without the gate, each rewritten file is compiled (NVRTC, device code; no GPU) with its
    # original, and kept only if it compiles where the original did (off: --no-compile-check)
    compile_check: bool = False

    @classmethod
    def from_paths(cls, paths: Sequence[str], **kw: Any) -> BatchConfig:
        """Read rule files and folders (a folder: its ``*.rule`` files in name order)."""
        files: list[tuple[str, str]] = []
        named: list[str] = []
        for p in paths:
            path = Path(p)
            if path.is_dir():
                found = sorted(path.glob("*.rule"))
                if not found:
                    raise KlcError(f"{p}: no .rule files in this folder")
                files += [(str(f), _read_rule_text(f)) for f in found]
            elif path.exists():
                files.append((str(path), _read_rule_text(path)))
                named.append(str(path))
            else:
                raise KlcError(f"{p}: no such rule file or folder")
        return cls(rule_files=tuple(files), named_files=tuple(named), **kw)

    def load_rules(self) -> list[Rule]:
        """The rules, compiled: every problem of every file reported together (RuleError),
        a rule name defined twice refused, unknown ``rule_names`` refused."""
        from klc.library import select_rules
        from klc.pipeline import check_hole_names, resolve_holes
        from klc.rules import RuleError, load_rules_text

        rules: list[Rule] = []
        errors: list[str] = []
        seen: dict[str, str] = {}
        for path, text in self.rule_files:
            try:
                loaded = load_rules_text(text, path)
            except RuleError as e:
                errors.extend(e.errors)
                continue
            for r in loaded:
                if r.name in seen:
                    errors.append(f"{r.location}: rule {r.name} is also defined at "
                                  f"{seen[r.name]}")
                    continue
                seen[r.name] = r.location
                rules.append(r)
        if errors:
            raise RuleError(errors)
        where = ", ".join(p for p, _ in self.rule_files)
        rules = select_rules(rules, list(self.rule_names), where)
        held = self.held_back(rules)
        _HELD[self.digest()] = held
        rules = [r for r in rules if r.name not in held]
        holes = dict(self.holes)
        check_hole_names(rules, holes)
        for r in rules:
            resolve_holes(r, holes)  # a bad or missing value stops the batch here
        return rules

    def held_back(self, rules: Sequence[Rule]) -> list[str]:
        """The rules that change results (their card says how, under ``precision``) and
        that an ungated batch does not apply: a library's fast-math skill would change every
        file's numerics with nothing to check them. Naming the rule (``--rule FILE`` or
        ``--only NAME``) or gating (``--gate``, ``--optimize``) applies it."""
        if self.gate or self.optimize:
            return []
        return [r.name for r in rules if r.card.precision and r.name not in self.rule_names
                and r.path not in self.named_files]

    def digest(self) -> str:
        """The configuration's hash: the journal's key, with each file's input hash."""
        doc = {"klc": __version__, "rules": self.rule_files, "names": self.rule_names,
               "holes": self.holes, "gate": self.gate, "optimize": self.optimize,
               "arch": self.arch, "gate_timeout": self.gate_timeout,
               "optimize_options": [(k, repr(v)) for k, v in self.optimize_options],
               "tree_only": self.tree_only, "named": self.named_files,
               "compile_check": self.compile_check}
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:24]


def _read_rule_text(path: Path) -> str:
    from klc.fsutil import read_input

    data = read_input(path, "rule file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise KlcError(f"{path}:{line}:{col}: not UTF-8 text") from None


@dataclass
class BatchOptions:
    """Where the files come from and go to, and how the work is spread."""

    roots: list[str]
    mode: str = "check"  # check | diff | out | in_place
    out_dir: str | None = None
    exclude: list[str] = field(default_factory=list)
    jobs: int = 1
    resume: bool = False
    journal: str | None = None  # default: OUT/.klc-batch.jsonl, or ./.klc-batch.jsonl
    executor: str = "local"  # local | ray
    address: str | None = None  # Ray cluster address
    gpus: list[str] | None = None  # GPU ids for gate workers; None: discover
    diffs: bool = False  # keep each rewritten file's diff in its result (an HTML report)

    def journal_path(self) -> Path | None:
        if self.mode not in WRITE_MODES:
            return None
        if self.journal:
            return Path(self.journal)
        if self.mode == "out":
            return Path(self.out_dir or ".") / JOURNAL_NAME
        return Path(JOURNAL_NAME)


# --------------------------------------------------------------------------------------
# Results


@dataclass
class FileResult:
    """What the batch did to one file. ``output`` (the bytes to write) and ``diff`` travel
    from the worker to the driver but are never journaled."""

    path: str  # as the user named it (root joined with the path under it)
    status: str
    reason: str = ""  # why, for a refusal or a failure (file:line:col where there is one)
    input_sha: str = ""
    output_sha: str = ""  # the bytes this run leaves for the file (the input's when unchanged)
    applied: list[dict[str, Any]] = field(default_factory=list)  # rule, line, col
    refused: list[dict[str, Any]] = field(default_factory=list)  # the first MAX_REFUSED
    refused_by: dict[str, int] = field(default_factory=dict)  # stage -> refused sites
    skipped: int = 0  # applicable sites left out because they overlap an earlier one
    notes: list[str] = field(default_factory=list)
    gate: dict[str, Any] | None = None  # the gate record (GateRecord.to_json)
    optimize: dict[str, Any] | None = None  # OptimizeResult.to_json
    elapsed_s: float = 0.0
    output: bytes | None = field(default=None, repr=False)
    original: bytes | None = field(default=None, repr=False)  # kept only for a later gate
    diff: str = field(default="", repr=False)

    @property
    def matched(self) -> bool:
        return bool(self.applied or self.refused_by or self.skipped)

    @property
    def failed(self) -> bool:
        return self.status in FAILED

    @property
    def guard_refusals(self) -> int:
        return self.refused_by.get("guard", 0)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "status": self.status, "reason": self.reason,
                "input_sha": self.input_sha, "output_sha": self.output_sha,
                "applied": self.applied, "refused": self.refused,
                "refused_by": self.refused_by, "skipped": self.skipped,
                "notes": self.notes, "gate": self.gate, "optimize": self.optimize,
                "elapsed_s": round(self.elapsed_s, 4)}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> FileResult:
        return cls(path=doc["path"], status=doc["status"], reason=doc.get("reason", ""),
                   input_sha=doc.get("input_sha", ""), output_sha=doc.get("output_sha", ""),
                   applied=list(doc.get("applied", [])), refused=list(doc.get("refused", [])),
                   refused_by=dict(doc.get("refused_by", {})),
                   skipped=int(doc.get("skipped", 0)), notes=list(doc.get("notes", [])),
                   gate=doc.get("gate"), optimize=doc.get("optimize"),
                   elapsed_s=float(doc.get("elapsed_s", 0.0)))


@dataclass
class BatchSummary:
    """Every file's result (sorted by path) and the counts of the summary table."""

    results: list[FileResult]
    config_digest: str
    elapsed_s: float = 0.0
    resumed: int = 0  # results taken from the journal
    interrupted: bool = False
    executor: str = "local"
    jobs: int = 1
    gpus: int = 0
    notes: list[str] = field(default_factory=list)  # about the batch itself

    def counts(self) -> dict[str, int]:
        rs = self.results
        return {
            "scanned": len(rs),
            "matched": sum(r.matched for r in rs),
            "rewritten": sum(r.status == REWRITTEN for r in rs),
            "unchanged": sum(r.status in (UNCHANGED, REFUSED) for r in rs),
            "refused_by_guard": sum(r.guard_refusals > 0 for r in rs),
            "parse_failed": sum(r.status == PARSE_FAILED for r in rs),
            "gate_failed": sum(r.status == GATE_FAILED for r in rs),
            "gate_slower": sum(r.refused_by.get("slower", 0) > 0 for r in rs),
            "compile_kept": sum(r.refused_by.get("compile", 0) > 0 for r in rs),
            "compile_unchecked": sum(r.refused_by.get("compile_unchecked", 0) > 0 for r in rs),
            "errors": sum(r.status == ERROR for r in rs),
            "sites_rewritten": sum(len(r.applied) for r in rs),
            "sites_refused_by_guard": sum(r.guard_refusals for r in rs),
            "resumed": self.resumed,
        }

    @property
    def failed(self) -> bool:
        return any(r.failed for r in self.results)

    def to_json(self) -> dict[str, Any]:
        return {"klc": __version__, "config": self.config_digest, "executor": self.executor,
                "jobs": self.jobs, "gpus": self.gpus, "interrupted": self.interrupted,
                "notes": self.notes,
                "elapsed_s": round(self.elapsed_s, 3), "counts": self.counts(),
                "files": [r.to_json() for r in self.results]}

    def to_markdown(self) -> str:
        c = self.counts()
        lines = ["# klc batch report", "",
                 f"configuration `{self.config_digest}`, executor {self.executor}, "
                 f"{self.jobs} job(s), {self.gpus} GPU(s), {self.elapsed_s:.1f} s"
                 + (" (interrupted)" if self.interrupted else ""), "",
                 "| what | count |", "| --- | ---: |"]
        lines += [f"| {SUMMARY_LABELS[k]} | {v} |" for k, v in c.items()]
        lines += ["", "| file | status | rules applied | refused | why |",
                  "| --- | --- | --- | ---: | --- |"]
        for r in self.results:
            rules = ", ".join(sorted({a["rule"] for a in r.applied}))
            why = r.reason or ("; ".join(r.notes))
            lines.append(f"| `{r.path}` | {r.status} | {rules} | {sum(r.refused_by.values())} | "
                         f"{why.replace('|', '/').replace(chr(10), ' ')} |")
        return "\n".join(lines) + "\n"


SUMMARY_LABELS = {
    "scanned": "files scanned", "matched": "files matched", "rewritten": "files rewritten",
    "unchanged": "files left unchanged",
    "refused_by_guard": "files with a match refused by a guard",
    "parse_failed": "files that failed to parse", "gate_failed": "files that failed the gate",
    "gate_slower": "files whose rewrite the gate measured slower (kept as they were)",
    "compile_kept": "files whose rewrite did not compile where the original did (kept as "
                    "they were)",
    "compile_unchecked": "rewritten files not compile-checked (the original does not compile "
                         "with NVRTC here)",
    "errors": "files that could not be read or are not CUDA source",
    "sites_rewritten": "sites rewritten", "sites_refused_by_guard": "sites refused by a guard",
    "resumed": "files taken from the journal (--resume)",
}


# --------------------------------------------------------------------------------------
# Walking the trees


@dataclass(frozen=True)
class Source:
    """One input file: the name shown, the file read, the file written (when writing)."""

    path: str  # root joined with the path under it, as the user would name it
    real: str  # its real path (symbolic links resolved): the journal's key
    dest: str | None = None  # --out: the mirror; --in-place: the real path


def _excluded(rel: str, name: str, globs: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(rel, g) or fnmatch.fnmatchcase(name, g) for g in globs)


def walk(roots: Sequence[str], exclude: Sequence[str] = ()) -> tuple[list[tuple[str, str, str]],
                                                                       list[tuple[str, str]]]:
    """``(root, path, path under the root)`` of each ``.cu``/``.cuh`` file, sorted, and
    ``(path, message)`` for what could not be walked. Symbolic links are followed, but a
    folder already being walked (a loop) is not entered again, and a file reached twice is
    listed once. Hidden folders (``.git``) are skipped, and so are the names and paths under
    the root that match an ``exclude`` glob (``*`` crosses ``/``, as in ``fnmatch``). A file
    named as a root is taken whatever its suffix."""
    found: list[tuple[str, str, str]] = []
    problems: list[tuple[str, str]] = []
    seen_files: set[tuple[int, int]] = set()
    for root in roots:
        if not os.path.exists(root):
            raise KlcError(f"{root}: {_not_there(root)}")
        if not os.path.isdir(root):
            st = os.stat(root)
            if (st.st_dev, st.st_ino) not in seen_files:
                seen_files.add((st.st_dev, st.st_ino))
                found.append((root, root, os.path.basename(root)))
            continue
        active: set[tuple[int, int]] = set()
        _walk_dir(root, root, "", exclude, active, seen_files, found, problems)
    return found, problems


def _walk_dir(root: str, folder: str, rel: str, exclude: Sequence[str],
              active: set[tuple[int, int]], seen_files: set[tuple[int, int]],
              found: list[tuple[str, str, str]], problems: list[tuple[str, str]]) -> None:
    try:
        st = os.stat(folder)
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as e:
        problems.append((folder, f"cannot read folder: {e.strerror or e}"))
        return
    ident = (st.st_dev, st.st_ino)
    if ident in active:
        return  # a symbolic link back into a folder being walked
    active.add(ident)
    try:
        for entry in entries:
            sub = f"{rel}/{entry.name}" if rel else entry.name
            if _excluded(sub, entry.name, exclude):
                continue
            try:
                is_dir = entry.is_dir()  # follows symbolic links
                is_file = entry.is_file()
            except OSError:
                problems.append((entry.path, _not_there(entry.path)))
                continue
            if is_dir:
                if not entry.name.startswith("."):
                    _walk_dir(root, entry.path, sub, exclude, active, seen_files, found,
                              problems)
            elif entry.name.endswith(SOURCE_SUFFIXES):
                if not is_file:  # a link to nothing or to a device, a FIFO, a socket...
                    problems.append((entry.path, _not_there(entry.path)))
                    continue
                try:
                    fst = entry.stat()
                except OSError as e:
                    problems.append((entry.path, f"cannot stat: {e.strerror or e}"))
                    continue
                key = (fst.st_dev, fst.st_ino)
                if key in seen_files:
                    continue
                seen_files.add(key)
                found.append((root, entry.path, sub))
    finally:
        active.discard(ident)


def _not_there(path: str) -> str:
    """Why a path that is not a regular file or a folder cannot be read, in a few words."""
    from klc.fsutil import kind_of

    try:
        return f"is {kind_of(os.stat(path).st_mode)}, not a regular file"
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "symbolic link loop"
        if os.path.islink(path):
            return "broken symbolic link"
        return "no such file or folder" if e.errno == errno.ENOENT else \
            f"cannot stat: {e.strerror or e}"


def _inside(child: str, parent: str) -> bool:
    c, p = os.path.realpath(child), os.path.realpath(parent)
    return c == p or c.startswith(p.rstrip(os.sep) + os.sep)


def check_out_dir(roots: Sequence[str], out_dir: str) -> None:
    """Refuse an output folder inside an input tree (the batch would rewrite its own output
    on the next run), or an input inside the output folder."""
    for root in roots:
        if os.path.isdir(root) and _inside(out_dir, root):
            raise KlcError(f"--out {out_dir}: the output folder is inside the input tree {root}; "
                           "choose a folder outside it")
        if os.path.exists(out_dir) and _inside(root, out_dir):
            raise KlcError(f"--out {out_dir}: the input {root} is inside the output folder; "
                           "choose another output folder")


def plan_sources(options: BatchOptions) -> tuple[list[Source], list[FileResult]]:
    """The files of the batch with where each is written, and results for what could not be
    walked (unreadable folders, broken links)."""
    if options.mode == "out":
        if not options.out_dir:
            raise KlcError("--out needs a folder")
        check_out_dir(options.roots, options.out_dir)
    found, problems = walk(options.roots, options.exclude)
    multi = len(options.roots) > 1
    names: dict[str, str] = {}
    if options.mode == "out" and multi:
        for root in options.roots:
            name = os.path.basename(os.path.normpath(root))
            if name in names:
                raise KlcError(f"--out with several inputs mirrors each under its own name; "
                               f"{root} and {names[name]} have the same name {name!r}")
            names[name] = root
    sources = []
    for root, path, rel in found:
        dest: str | None = None
        if options.mode == "out":
            assert options.out_dir is not None
            under = rel if os.path.isdir(root) else os.path.basename(root)
            if multi and os.path.isdir(root):
                under = os.path.join(os.path.basename(os.path.normpath(root)), rel)
            dest = os.path.join(options.out_dir, under)
        real = os.path.realpath(path)
        if options.mode == "in_place":
            dest = real
        sources.append(Source(path, real, dest))
    failed = [FileResult(path, ERROR, f"{path}: {msg}") for path, msg in problems]
    return sources, failed


# --------------------------------------------------------------------------------------
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


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
        res.reason = f"{path}: internal error: {type(e).__name__}: {e}"
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
    from klc.frontend import check_text, parse_bytes

    if not data.strip():
        res.notes.append(f"{path}: empty file")
        return
    check_text(path, data)
    unit = parse_bytes(data, path)
    if unit.problems:
        p = unit.problems[0]
        more = f" (and {len(unit.problems) - 1} more)" if len(unit.problems) > 1 else ""
        res.status = PARSE_FAILED
        res.reason = f"{p.describe(path)}{more}; the file was not rewritten"
        return
    new = _optimize(state, unit, res) if state.config.optimize else _apply(state, unit, res)
    if new is None:
        return
    res.status, res.output = REWRITTEN, new
    if state.config.compile_check and not (state.config.gate or state.config.optimize):
        compile_check(state.config, res, unit, new)
        if res.output is None:
            return
    if state.want_diff:
        res.diff = unified_diff(data, new, path)
    if state.config.gate and state.gate_inline:
        gate_result(state.config, res, data, new)


def _apply(state: WorkerState, unit: Any, res: FileResult) -> bytes | None:
    from klc.pipeline import apply_rules, spec_of

    spec = spec_of(unit)  # a malformed spec is an error of the file, not a refusal
    try:
        outcome = apply_rules(unit, state.rules, dict(state.config.holes), spec,
                              clang=not state.config.tree_only)
    except KlcError as e:
        # the rewrite would produce a syntax error: refused whole, nothing written
        res.status, res.reason = REFUSED, str(e)
        return None
    for rw in outcome.applied:
        line, col = unit.position(rw.match.start)
        res.applied.append({"rule": rw.match.rule.name, "line": line, "col": col,
                            "holes": dict(rw.holes)})
    for site in outcome.refused:
        res.refused_by[site.stage] = res.refused_by.get(site.stage, 0) + 1
        if len(res.refused) < MAX_REFUSED:
            line, col = unit.position(site.match.start)
            res.refused.append({"rule": site.rule.name, "line": line, "col": col,
                                "stage": site.stage, "reason": site.reason})
    res.skipped = len(outcome.skipped)
    res.notes.extend(outcome.notes)
    if outcome.changed:
        return outcome.source
    if outcome.refused:
        res.status = REFUSED
        first = outcome.refused[0]
        res.reason = (f"{unit.where(first.match.start)}: {first.rule.name}: {first.reason}"
                      + (f" (and {len(outcome.refused) - 1} more refused)"
                         if len(outcome.refused) > 1 else ""))
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


def _optimize(state: WorkerState, unit: Any, res: FileResult) -> bytes | None:
    opts = dict(state.config.optimize_options)
    result = optimizer()(unit.source, unit.path, skills=state.rules, arch=state.config.arch,
                         **opts)
    res.optimize = result.to_json()
    why = getattr(result, "stop_reason", "")
    if why:
        res.notes.append(f"{unit.path}: optimize: {why}")
    if result.changed and result.source != unit.source:
        return bytes(result.source)
    return None


def compile_check(config: BatchConfig, res: FileResult, unit: Any, new: bytes) -> None:
    """An ungated rewrite is kept only if it compiles where its original does: both are
    compiled by NVRTC (the gate's compile stage: device code, host code blanked, no GPU).
    A rewrite that breaks the build keeps the original (counted under ``refused_by``
    "compile", with NVRTC's first error); an original that does not compile here (a header
    NVRTC cannot find, host-only code it cannot blank) leaves nothing to compare against:
    the rewrite is kept, and counted as "compile_unchecked"."""
    from klc.frontend import parse_bytes
    from klc.gate.compile import DEFAULT_ARCH, compile_unit

    arch = config.arch or DEFAULT_ARCH
    try:
        before = compile_unit(unit, arch=arch)
        if not before.ok:
            res.refused_by["compile_unchecked"] = 1
            first = (before.error or "").strip().splitlines()[:1]
            res.notes.append(f"{res.path}: not compile-checked: the original does not compile "
                             f"with NVRTC here ({first[0] if first else 'no log'})")
            return
        after = compile_unit(parse_bytes(new, unit.path), arch=arch)
    except KlcError as e:
        res.refused_by["compile_unchecked"] = 1
        res.notes.append(f"{res.path}: not compile-checked: {e}")
        return
    if after.ok:
        return
    rules = ", ".join(sorted({a["rule"] for a in res.applied}))
    first = (after.error or "").strip().splitlines()[:1]
    res.status, res.output, res.diff = REFUSED, None, ""
    res.refused_by["compile"] = res.refused_by.get("compile", 0) + len(res.applied)
    res.reason = (f"the rewrite ({rules}) does not compile where the original does: "
                  f"{first[0] if first else 'NVRTC failed'}; the original is kept")
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
                          timeout_s=config.gate_timeout)
        else:
            record = gate(candidate, path, arch=config.arch, timeout_s=config.gate_timeout)
            res.notes.append(f"{path}: no klc-spec block: the gate compiled the rewrite but "
                             "cannot verify or profile it (see docs/spec.md)")
    except KlcError as e:
        res.status, res.reason, res.output, res.diff = GATE_FAILED, f"gate: {e}", None, ""
        res.gate = {"verdict": "failed", "reason": str(e)}
        return
    except Exception as e:  # the gate isolates kernels; this is the gate itself failing
        res.status, res.output, res.diff = GATE_FAILED, None, ""
        res.reason = f"{path}: gate: internal error: {type(e).__name__}: {e}"
        res.gate = {"verdict": "failed", "reason": res.reason}
        return
    res.gate = record.to_json()
    if record.verdict not in ACCEPTED_GATE_VERDICTS:
        res.status, res.output, res.diff = GATE_FAILED, None, ""
        res.reason = f"{path}: gate {record.verdict}: {record.reason}"
        return
    profile = record.stages.get("profile")
    data = profile.data if profile is not None else {}
    speedup, noise = data.get("speedup"), data.get("noise") or 0.0
    if isinstance(speedup, (int, float)) and speedup < 1 - max(SLOWER_MARGIN, noise):
        # verified, but slower than the original beyond the noise: a batch keeps the original
        rules = ", ".join(sorted({a["rule"] for a in res.applied}))
        res.status, res.output, res.diff = REFUSED, None, ""
        res.refused_by["slower"] = res.refused_by.get("slower", 0) + len(res.applied)
        res.reason = (f"{path}: gate: the rewrite ({rules}) verifies but runs {speedup:.2f}x "
                      "the original, slower beyond the noise: the original is kept")
        res.applied = []


def unified_diff(old: bytes, new: bytes, path: str) -> str:
    a = old.decode("utf-8", "replace").splitlines(keepends=True)
    b = new.decode("utf-8", "replace").splitlines(keepends=True)
    from klc.fsutil import diff_name

    lines = difflib.unified_diff(a, b, diff_name("a/", path), diff_name("b/", path))
    return "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n"
                   for ln in lines)


# --------------------------------------------------------------------------------------
# Worker processes (local executor)

_STATE: WorkerState | None = None
_RULES_BY_DIGEST: dict[str, list[Rule]] = {}  # a Ray worker process serves many tasks
_HELD: dict[str, list[str]] = {}  # by digest: BatchConfig.held_back of the loaded rules


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
    _die_with_parent()
    _tune_gc()
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    _STATE = WorkerState(config, _rules_for(config), want_diff, gate_inline, keep_original,
                         send_unchanged)


_GC_TUNED = False


def _tune_gc() -> None:
    """``klc.listing.tune_gc``, once, and only in processes the batch owns (its workers)."""
    from klc.listing import tune_gc

    global _GC_TUNED
    if not _GC_TUNED:
        tune_gc()
        _GC_TUNED = True


def _die_with_parent() -> None:
    """Ask Linux to kill this worker when its driver dies (a SIGKILLed batch leaves no
    orphan workers); elsewhere a no-op."""
    import ctypes
    import signal

    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


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


# --------------------------------------------------------------------------------------
# GPUs


def discover_gpus() -> list[str]:
    """The GPU ids this machine offers: ``CUDA_VISIBLE_DEVICES`` when set, else ``nvidia-smi
    -L``, else CuPy's device count; none when nothing answers."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        ids = [v.strip() for v in visible.split(",") if v.strip()]
        return [] if not ids or ids[0].startswith("-") else ids
    exe = shutil.which("nvidia-smi")
    if exe:
        try:
            out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=20,
                                 check=False).stdout
            n = sum(1 for line in out.splitlines() if line.startswith("GPU "))
            if n:
                return [str(i) for i in range(n)]
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        import cupy

        return [str(i) for i in range(int(cupy.cuda.runtime.getDeviceCount()))]
    except Exception:  # no driver, no library, no device: all mean none
        return []


# --------------------------------------------------------------------------------------
# Executors: each runs the work for a list of sources and hands every result to a callback


OnResult = Callable[[Source, FileResult], None]


class LocalExecutor:
    """Worker processes on this machine.

    ``jobs`` processes rewrite files, fed chunks of paths; with ``--gate`` or ``--optimize``
    and GPUs present, one more process per GPU (``CUDA_VISIBLE_DEVICES`` set to that GPU
    alone) gates each candidate, or optimizes each file. With ``jobs == 1`` and no GPU the
    work runs in this process (no process start at all).

    The rewriting workers are forked by ``prefork`` when the driver has no other thread yet
    (Linux): they start with the driver's modules and loaded rules, 0.3 s sooner than
    spawned ones that import klc and load the rules again. Any other time (a thread is
    running, another system, a pool started again after a worker died, GPU workers, which
    hold a CUDA context) they are spawned: forking a process with threads can copy a lock
    that another thread held, and the child then waits on it forever."""

    name = "local"

    def __init__(self, jobs: int, gpus: Sequence[str] = ()) -> None:
        self.jobs = max(1, jobs)
        self.gpus = list(gpus)
        self._forked: Any = None  # (pool, its initializer's arguments)

    def start(self) -> None:
        """Nothing to join: worker processes start with the work (or ``prefork``)."""

    def prefork(self, config: BatchConfig, want_diff: bool, send_unchanged: bool) -> None:
        """Fork the rewriting workers now, if that is safe (see the class doc)."""
        import concurrent.futures as cf
        import multiprocessing as mp
        import threading

        if self.jobs == 1 or (self.gpus and (config.gate or config.optimize)) \
                or not sys.platform.startswith("linux") or threading.active_count() > 1:
            return
        init = _worker_init(config, want_diff, False, send_unchanged)
        pool = cf.ProcessPoolExecutor(self.jobs, mp.get_context("fork"), _init_worker, init)
        try:
            # a first task makes the pool fork all its workers, then start its manager thread
            pool.submit(len, ()).result()
        except Exception:  # a worker that could not start: ``run`` spawns them as before
            pool.shutdown(wait=False, cancel_futures=True)
            return
        except BaseException:  # Ctrl-C while forking: no worker is left behind
            end_pool(pool)
            raise
        self._forked = (pool, init)

    def stop(self) -> None:
        """The pools are shut down at the end of ``run``; a forked one that ``run`` did not
        take (no file to do, or other work), here."""
        if self._forked is not None:
            end_pool(self._forked[0])
            self._forked = None

    def run(self, config: BatchConfig, sources: list[Source], on_result: OnResult,
            want_diff: bool, send_unchanged: bool) -> None:
        use_gpus = bool(self.gpus) and (config.gate or config.optimize)
        if use_gpus and config.optimize:
            self._run_on_gpus(config, sources, on_result, want_diff, send_unchanged)
            return
        if self.jobs == 1 and not use_gpus:
            state = WorkerState(config, _rules_for(config), want_diff, True, False,
                                send_unchanged)
            for src in sources:
                on_result(src, process_path(state, src.path))
            return
        self._run_pool(config, sources, on_result, want_diff, send_unchanged, use_gpus)

    def _run_pool(self, config: BatchConfig, sources: list[Source], on_result: OnResult,
                  want_diff: bool, send_unchanged: bool, use_gpus: bool) -> None:
        """Chunks of paths to ``jobs`` processes. A worker that dies (a crash in native code,
        the OOM killer) breaks the pool: the files it had not finished are run again in a
        fresh pool, one per task in one process, until the file that kills its worker is
        found; that file is an error, and the rest goes on in parallel again."""
        import concurrent.futures as cf
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        by_path = {s.path: s for s in sources}
        gates = _GatePools(ctx, config, self.gpus, send_unchanged) if use_gpus else None
        init = _worker_init(config, want_diff, use_gpus, send_unchanged)

        def deliver(res: FileResult) -> None:
            if gates is not None and config.gate and res.status == REWRITTEN:
                gates.submit(res)
            else:
                on_result(by_path[res.path], res)

        todo = [s.path for s in sources]
        isolate = False
        try:
            while todo:
                if self._forked is not None and self._forked[1] == init and not isolate:
                    pool, self._forked = self._forked[0], None
                else:
                    pool = cf.ProcessPoolExecutor(1 if isolate else self.jobs, ctx,
                                                  _init_worker, init)
                try:
                    tasks = {pool.submit(_work_chunk, c): c
                             for c in chunks(todo, self.jobs, isolate)}
                    left = _drain(tasks, gates, deliver, on_result, by_path)
                finally:
                    end_pool(pool)
                if left and isolate:  # the first file not finished killed its worker
                    culprit, left = left[0], left[1:]
                    on_result(by_path[culprit], FileResult(
                        culprit, ERROR, f"{culprit}: the worker process died while processing "
                        "this file (a crash in native code, or killed for memory)"))
                isolate = bool(left) and not isolate
                todo = left
            while gates is not None and gates.busy:
                _drain({}, gates, deliver, on_result, by_path)
        except BaseException:
            if gates is not None:
                gates.close(cancel=True)
            raise
        if gates is not None:
            gates.close(cancel=False)

    def _run_on_gpus(self, config: BatchConfig, sources: list[Source], on_result: OnResult,
                     want_diff: bool, send_unchanged: bool) -> None:
        """--optimize with GPUs: each file is optimized on one GPU worker (its trials are
        gated there), one file per GPU at a time; a worker that dies costs its file only."""
        import concurrent.futures as cf
        import multiprocessing as mp
        from concurrent.futures.process import BrokenProcessPool

        ctx = mp.get_context("spawn")

        def pool(gpu: str) -> cf.ProcessPoolExecutor:
            return cf.ProcessPoolExecutor(1, ctx, _init_worker, (config, want_diff, True, False,
                                                                 send_unchanged, gpu))

        pools = [pool(g) for g in self.gpus]
        try:
            queue = iter(sources)
            running: dict[cf.Future[Any], tuple[int, Source]] = {}
            for i in range(len(pools)):
                src = next(queue, None)
                if src is not None:
                    running[pools[i].submit(_work_chunk, [src.path])] = (i, src)
            while running:
                done, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    i, src = running.pop(fut)
                    try:
                        res = fut.result()[0]
                    except BrokenProcessPool:
                        pools[i].shutdown(wait=False)
                        pools[i] = pool(self.gpus[i])
                        res = FileResult(src.path, ERROR, f"{src.path}: the worker on GPU "
                                         f"{self.gpus[i]} died while optimizing this file")
                    on_result(src, res)
                    nxt = next(queue, None)
                    if nxt is not None:
                        running[pools[i].submit(_work_chunk, [nxt.path])] = (i, nxt)
        finally:
            for p in pools:
                end_pool(p)


def _drain(tasks: dict[Any, list[str]], gates: _GatePools | None,
           deliver: Callable[[FileResult], None], on_result: OnResult,
           by_path: dict[str, Source]) -> list[str]:
    """Hand on results as chunks (and gate jobs) finish; returns the paths not finished
    when the pool broke (in submission order), or [] when every chunk finished."""
    import concurrent.futures as cf
    from concurrent.futures.process import BrokenProcessPool

    order = list(tasks)
    pending = set(tasks)
    while pending or (gates is not None and gates.busy):
        waiting = pending | (set(gates.busy) if gates is not None else set())
        done, _ = cf.wait(waiting, return_when=cf.FIRST_COMPLETED)
        for fut in done:
            if gates is not None and fut in gates.busy:
                res = gates.finish(fut)
                on_result(by_path[res.path], res)
                continue
            pending.discard(fut)
            try:
                results = fut.result()
            except BrokenProcessPool:
                return _after_break(order, tasks, deliver)
            del tasks[fut]
            for res in results:
                deliver(res)
        if not pending:
            break
    return []


def _after_break(order: list[Any], tasks: dict[Any, list[str]],
                 deliver: Callable[[FileResult], None]) -> list[str]:
    """Deliver the chunks that finished before the pool broke; return the others' paths."""
    left: list[str] = []
    for fut in order:
        if fut not in tasks:
            continue
        if fut.done() and not fut.cancelled() and fut.exception() is None:
            for res in fut.result():
                deliver(res)
        else:
            left += tasks[fut]
    return left


class _GatePools:
    """One single-process pool per GPU (``CUDA_VISIBLE_DEVICES`` set to it), one gate job at
    a time on each, the rest waiting on the driver: a gate worker that dies costs the one
    file it was gating, and is replaced."""

    def __init__(self, ctx: Any, config: BatchConfig, gpus: list[str],
                 send_unchanged: bool) -> None:
        from collections import deque

        self.ctx, self.config, self.gpus = ctx, config, gpus
        self.send_unchanged = send_unchanged
        self.pools = [self._pool(g) for g in gpus]
        self.busy: dict[Any, tuple[int, FileResult]] = {}
        self.waiting: deque[FileResult] = deque()

    def _pool(self, gpu: str) -> Any:
        import concurrent.futures as cf

        return cf.ProcessPoolExecutor(1, self.ctx, _init_worker,
                                      (self.config, False, False, False, False, gpu))

    def submit(self, res: FileResult) -> None:
        self.waiting.append(res)
        self._fill()

    def _fill(self) -> None:
        taken = {i for i, _ in self.busy.values()}
        for i in range(len(self.pools)):
            if i in taken or not self.waiting:
                continue
            res = self.waiting.popleft()
            fut = self.pools[i].submit(_gate_job, self.config, res, self.send_unchanged)
            self.busy[fut] = (i, res)

    def finish(self, fut: Any) -> FileResult:
        from concurrent.futures.process import BrokenProcessPool

        i, res = self.busy.pop(fut)
        try:
            out: FileResult = fut.result()
        except BrokenProcessPool:
            self.pools[i].shutdown(wait=False)
            self.pools[i] = self._pool(self.gpus[i])
            original = res.original or b""
            res.original = None
            res.status, res.diff = GATE_FAILED, ""
            res.reason = (f"{res.path}: the gate worker on GPU {self.gpus[i]} died while "
                          "gating this file")
            _settle(res, original, self.send_unchanged)
            out = res
        self._fill()
        return out

    def close(self, cancel: bool) -> None:
        for p in self.pools:
            if cancel:
                end_pool(p)
            else:
                p.shutdown(wait=True)


MAX_CHUNK = 32


def chunks(paths: list[str], jobs: int, isolate: bool = False) -> list[list[str]]:
    """Paths cut into tasks, guided self-scheduling: each chunk a quarter of a worker's
    share of what is left (at most ``MAX_CHUNK`` files), so that early chunks make the
    per-task cost vanish, results stream back, and the last ones are single files that
    leave no worker idle at the end. ``isolate``: one file per task."""
    out: list[list[str]] = []
    i = 0
    while i < len(paths):
        left = len(paths) - i
        size = 1 if isolate else max(1, min(MAX_CHUNK, left // (jobs * 4)))
        out.append(paths[i:i + size])
        i += size
    return out


class RayExecutor:
    """The same work as Ray tasks, on a local Ray instance or a cluster (``--address``).

    Files are tasks: the driver reads each file and sends its bytes (no shared file system
    is assumed), the task returns the result with the new bytes, and the driver writes.
    Rules travel as text inside the configuration and are compiled once per Ray worker
    process. With ``--gate`` and GPUs in the cluster, each candidate is gated by a task that
    asks for ``num_gpus=1`` (Ray sets ``CUDA_VISIBLE_DEVICES`` for it); without GPUs the gate
    runs in the file's task (compile only), as locally. With ``--optimize`` and GPUs, the
    file's task itself asks for one GPU. At most ``inflight`` tasks are outstanding, so the
    driver never holds more than that many files' bytes."""

    name = "ray"

    def __init__(self, address: str | None = None, inflight: int | None = None,
                 jobs: int | None = None) -> None:
        self.address = address
        self.inflight = inflight
        self.jobs = jobs  # CPUs of a new local instance (none: all of this machine's)
        self.gpus = 0
        self._started = False

    def start(self) -> None:
        """Join the cluster (or start a local instance): before anything is written."""
        from klc.extras import require

        ray = require("ray", "--executor ray")
        if ray.is_initialized():
            return
        if self.address:
            _probe(self.address)
        kw: dict[str, Any] = {}
        if self.address is None and not os.environ.get("RAY_ADDRESS"):
            kw = {"_node_ip_address": "127.0.0.1", "num_cpus": self.jobs}  # local only
        try:
            ray.init(address=self.address, include_dashboard=False, log_to_driver=False,
                     configure_logging=False, **kw)
        except (ConnectionError, RuntimeError, ValueError) as e:
            where = self.address or "a new local instance"
            raise KlcError(f"--executor ray: cannot start or reach Ray at {where}: "
                           f"{str(e).splitlines()[0] if str(e) else type(e).__name__}"
                           ) from None
        self._started = True

    def stop(self) -> None:
        if self._started:
            import ray

            ray.shutdown()
            self._started = False

    def run(self, config: BatchConfig, sources: list[Source], on_result: OnResult,
            want_diff: bool, send_unchanged: bool) -> None:
        import ray

        if not ray.is_initialized():
            self.start()
        self._run(ray, config, sources, on_result, want_diff, send_unchanged)

    def _run(self, ray: Any, config: BatchConfig, sources: list[Source], on_result: OnResult,
             want_diff: bool, send_unchanged: bool) -> None:
        resources = ray.cluster_resources()
        self.gpus = int(resources.get("GPU", 0))
        use_gpus = self.gpus > 0 and (config.gate or config.optimize)
        gate_in_task = not (use_gpus and config.gate and not config.optimize)
        file_task = ray.remote(num_cpus=1, num_gpus=1 if use_gpus and config.optimize else 0,
                               max_retries=1)(_ray_file)
        gate_task = ray.remote(num_cpus=1, num_gpus=1, max_retries=1)(_ray_gate)
        cfg = ray.put(config)
        limit = self.inflight or max(4, 4 * int(resources.get("CPU", 1)))
        queue = iter(sources)
        running: dict[Any, Source] = {}

        def submit_next() -> bool:
            for src in queue:
                try:
                    data = _read(src.path)
                except KlcError as e:
                    on_result(src, FileResult(src.path, ERROR, str(e)))
                    continue
                running[file_task.remote(cfg, data, src.path, want_diff, gate_in_task,
                                         send_unchanged)] = src
                return True
            return False

        try:
            while len(running) < limit and submit_next():
                pass
            while running:
                done, _ = ray.wait(list(running), num_returns=1)
                ref = done[0]
                src = running.pop(ref)
                res = _ray_result(ray, ref, src)
                if res.original is not None and res.status == REWRITTEN:
                    running[gate_task.remote(cfg, res, send_unchanged)] = src
                else:
                    on_result(src, res)
                    submit_next()
        except BaseException:
            for ref in running:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
            raise


def _probe(address: str, timeout: float = 10.0) -> None:
    """Fail fast on a cluster address nobody answers at (Ray itself retries for minutes)."""
    import socket

    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", "local": Ray's own words
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as e:
        raise KlcError(f"--address {address}: no Ray cluster answers there "
                       f"({e.strerror or e})") from None


def _ray_result(ray: Any, ref: Any, src: Source) -> FileResult:
    try:
        return ray.get(ref)
    except Exception as e:  # the task's process died (a fault the gate did not catch)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return FileResult(src.path, ERROR, f"{src.path}: Ray task failed: {first}")


def _ray_file(config: BatchConfig, data: bytes, path: str, want_diff: bool,
              gate_inline: bool, send_unchanged: bool) -> FileResult:
    """A Ray task: one file, from its bytes."""
    _tune_gc()  # a Ray worker process serves this batch's tasks
    state = WorkerState(config, _rules_for(config), want_diff, gate_inline,
                        config.gate and not gate_inline, send_unchanged)
    return process_bytes(state, data, path)


def _ray_gate(config: BatchConfig, res: FileResult, send_unchanged: bool) -> FileResult:
    """A Ray task with one GPU: gate one rewritten file."""
    return _gate_job(config, res, send_unchanged)


# --------------------------------------------------------------------------------------
# The journal


class Journal:
    """JSON lines, one fsync'd append per finished file (and per write begun in place).

    A line torn by a kill is ignored on reading; lines of another configuration are
    ignored, so a changed rule or option redoes every file."""

    def __init__(self, path: Path, digest: str) -> None:
        self.path = path
        self.digest = digest
        self.other = 0  # entries of other configurations seen by read()
        self._f: Any = None

    def read(self) -> dict[str, dict[str, Any]]:
        """The last entry of this configuration for each file (keyed by real path)."""
        entries: dict[str, dict[str, Any]] = {}
        if not os.path.lexists(self.path):
            return entries
        from klc.fsutil import read_input  # (a FIFO named as the journal is refused)

        text = read_input(self.path, "journal", limit=1 << 36).decode("utf-8", "replace")
        for line in text.splitlines():
            try:
                doc = json.loads(line)
            except json.JSONDecodeError:
                continue  # torn by a kill mid-append
            if not isinstance(doc, dict) or "key" not in doc:
                continue
            if doc.get("config") == self.digest:
                entries[doc["key"]] = doc
            else:
                self.other += 1
        return entries

    def open(self, fresh: bool) -> None:
        """Open for appending, under an exclusive advisory lock held until ``close``: a second
        batch on the same journal stops here, before it touches any file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if os.path.lexists(self.path) and not self.path.is_file():
                raise KlcError(f"{self.path}: the journal path is not a regular file")
            self._f = open(self.path, "ab")  # noqa: SIM115 (held open for the batch)
            self._lock()
            if fresh:  # truncated in place: the lock stays on this file
                self._f.truncate(0)
                self._f.write((json.dumps({"journal": "klc batch", "klc": __version__,
                                           "config": self.digest}) + "\n").encode())
                self._f.flush()
                os.fsync(self._f.fileno())
            if self._f.tell() > 0:
                with open(self.path, "rb") as f:
                    f.seek(-1, os.SEEK_END)
                    if f.read(1) != b"\n":
                        self._f.write(b"\n")  # end the line a kill tore
        except OSError as e:
            self.close()
            raise KlcError(f"{self.path}: cannot write the journal: {e.strerror or e}") from None
        except BaseException:
            self.close()
            raise

    def _lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # not a POSIX system: no lock
            return
        try:
            fcntl.flock(self._f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise KlcError(f"{self.path}: another klc batch is running with this journal "
                               "(it holds the journal's lock); wait for it to end, or give "
                               "another --journal") from None
            # a file system without locks: go on unlocked

    def append(self, doc: dict[str, Any]) -> None:
        """One fsync'd line. A failed write (a full disk) stops the batch: every file already
        written is whole and journaled, and --resume continues once there is room."""
        try:
            self._f.write((json.dumps({"config": self.digest, **doc}) + "\n").encode())
            self._f.flush()
            os.fsync(self._f.fileno())
        except OSError as e:
            raise KlcError(f"{self.path}: cannot write the journal: {e.strerror or e}; the "
                           "batch stopped (every file is as it was or completely written; "
                           "run it again with --resume once this is fixed)") from None

    def close(self) -> None:
        if self._f is not None:
            f, self._f = self._f, None
            with contextlib.suppress(OSError):  # (a line a full disk cut is ignored on reading)
                f.close()


def _done_before(entry: dict[str, Any] | None, src: Source, mode: str,
                 journal: Journal) -> FileResult | None:
    """The journaled result of a file when it still holds, else None (redo the file)."""
    if entry is None:
        return None
    try:
        current = _sha(_read(src.path))
    except KlcError:
        return None
    res = FileResult.from_json(entry["result"])
    res.path = src.path
    if mode == "in_place":
        if entry["phase"] == "begin":
            if current != entry["output_sha"]:
                return None  # the write never happened: redo the file
            journal.append({"key": src.real, "phase": "done", "input_sha": entry["input_sha"],
                            "output_sha": entry["output_sha"], "result": entry["result"]})
            return res
        return res if current == entry["output_sha"] else None
    if current != entry["input_sha"]:
        return None
    if src.dest is not None and res.output_sha:
        try:
            if _sha(_read(src.dest)) != res.output_sha:
                return None
        except KlcError:
            return None
    return res


def _sweep_temporaries(folders: Iterable[str]) -> None:
    """Remove the temporary files of writes that a kill interrupted (``.NAME.*.klc-tmp``)."""
    for folder in set(folders):
        with contextlib.suppress(OSError):
            for entry in os.scandir(folder):
                if entry.name.startswith(".") and entry.name.endswith(TMP_SUFFIX):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)


# --------------------------------------------------------------------------------------
# The driver


def make_executor(options: BatchOptions, config: BatchConfig) -> LocalExecutor | RayExecutor:
    if options.executor == "ray":
        return RayExecutor(options.address, jobs=options.jobs)
    if options.executor != "local":
        raise KlcError(f"--executor {options.executor}: expected local or ray")
    gpus = options.gpus
    if gpus is None:
        gpus = discover_gpus() if (config.gate or config.optimize) else []
    return LocalExecutor(options.jobs, gpus)


def run_batch(config: BatchConfig, options: BatchOptions,
              on_start: Callable[[int], None] | None = None,
              on_result: Callable[[FileResult], None] | None = None) -> BatchSummary:
    """Run a batch; returns every file's result. Problems with the batch itself (rules, an
    output folder inside an input, no such input) raise KlcError before any file is
    touched; problems with a file are that file's result. ``on_start(total)`` is called
    once the files are known, ``on_result`` for each file as it finishes (progress)."""
    t0 = time.monotonic()
    if options.mode not in MODES:
        raise KlcError(f"unknown batch mode {options.mode!r}")
    if options.resume and options.mode not in WRITE_MODES:
        raise KlcError("--resume continues a batch that writes files: give --out DIR or "
                       "--in-place")
    if options.jobs < 1:
        raise KlcError(f"-j {options.jobs}: give at least one job")
    _rules_for(config)  # a rule file that fails to load stops everything here
    if config.optimize:
        optimizer()
    sources, results = plan_sources(options)
    executor = make_executor(options, config)
    executor.start()
    with sigint_guard():  # a second Ctrl-C must not break the cleanup of the first
        try:
            if isinstance(executor, LocalExecutor) and sources:
                executor.prefork(config, want_diff=options.mode == "diff" or options.diffs,
                                 send_unchanged=options.mode == "out")
            return _drive(config, options, executor, sources, results, t0, on_start,
                          on_result)
        finally:
            executor.stop()


def _drive(config: BatchConfig, options: BatchOptions, executor: LocalExecutor | RayExecutor,
           sources: list[Source], results: list[FileResult], t0: float,
           on_start: Callable[[int], None] | None,
           on_result: Callable[[FileResult], None] | None) -> BatchSummary:
    walk_failures = len(results)
    digest = config.digest()
    mode_digest = hashlib.sha256(json.dumps(
        [digest, options.mode, os.path.realpath(options.out_dir) if options.out_dir else None]
    ).encode()).hexdigest()[:24]
    summary = BatchSummary(results, digest, executor=executor.name, jobs=options.jobs)
    if isinstance(executor, LocalExecutor):
        summary.gpus = len(executor.gpus) if (config.gate or config.optimize) else 0
    journal: Journal | None = None
    jpath = options.journal_path()
    todo = sources
    if jpath is not None:
        journal = Journal(jpath, mode_digest)
        if options.out_dir:
            Path(options.out_dir).mkdir(parents=True, exist_ok=True)
        entries = journal.read() if options.resume else {}
        if options.resume and not entries:
            summary.notes.append(
                f"{jpath}: no journal of this configuration (rules, options, output) to resume "
                "from; every file is done" if journal.other == 0 else
                f"{jpath}: the journal was written by another configuration (rules, options or "
                "output changed); every file is done again")
        journal.open(fresh=not options.resume)
        if options.resume:
            _sweep_temporaries(os.path.dirname(s.dest) for s in sources if s.dest)
            todo = []
            for src in sources:
                prior = _done_before(entries.get(src.real), src, options.mode, journal)
                if prior is None:
                    todo.append(src)
                else:
                    results.append(prior)
                    summary.resumed += 1
    if on_start is not None:
        on_start(len(sources) + walk_failures)
    if on_result is not None:
        for r in list(summary.results):
            on_result(r)

    def finished(src: Source, res: FileResult) -> None:
        if options.mode in WRITE_MODES and res.output is not None:
            _write(src, res, options.mode, journal, options.out_dir)
        if journal is not None:
            journal.append({"key": src.real, "phase": "done", "input_sha": res.input_sha,
                            "output_sha": res.output_sha, "result": res.to_json()})
        res.output = res.original = None
        results.append(res)
        if on_result is not None:
            on_result(res)

    writer = _Writer(finished)
    try:
        executor.run(config, todo, writer.put, want_diff=options.mode == "diff" or options.diffs,
                     send_unchanged=options.mode == "out")
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        writer.close()  # what was handed over is complete: it is written, then journaled
        if journal is not None:
            journal.close()
    if isinstance(executor, RayExecutor):
        summary.gpus = executor.gpus if (config.gate or config.optimize) else 0
    if options.mode == "out" and not summary.interrupted:
        copied, unchanged, skipped = copy_rest(options)
        note = (f"copied {copied} other file(s) of the tree (headers, build files) into "
                f"{options.out_dir}" + (f", {unchanged} already there" if unchanged else ""))
        if skipped:
            note += f"; not copied: {'; '.join(skipped[:5])}" + (
                f" and {len(skipped) - 5} more" if len(skipped) > 5 else "")
        if copied or unchanged or skipped:
            summary.notes.append(note)
    held = _HELD.get(config.digest())
    if held:
        summary.notes.append(
            f"not applied without --gate: {', '.join(held)} (they change results; name them "
            "with --rule FILE or --only NAME to apply them ungated)")
    summary.results.sort(key=lambda r: r.path)
    summary.elapsed_s = time.monotonic() - t0
    return summary


def copy_rest(options: BatchOptions) -> tuple[int, int, list[str]]:
    """``--out``: copy the files of each input folder that are not CUDA sources (headers,
    ``CMakeLists.txt``, data) into the mirror, so that the output tree builds as the input
    does. The walk is the batch's: hidden folders and ``--exclude`` globs are skipped, links
    are followed once (a loop is not entered again), only regular files are copied, each
    atomically (temporary file, fsync, rename) and only when the mirror's copy differs
    (size and modification time). A destination whose folder resolves outside the output
    folder (a link planted there) is refused, not followed. Returns (copied, already there,
    what was not copied and why)."""
    import filecmp

    from klc.fsutil import atomic_write

    assert options.out_dir is not None
    multi = len(options.roots) > 1
    copied = unchanged = 0
    skipped: list[str] = []
    for root in options.roots:
        if not os.path.isdir(root):
            continue
        base = os.path.join(options.out_dir, os.path.basename(os.path.normpath(root))) \
            if multi else options.out_dir
        seen: set[tuple[int, int]] = set()
        for folder, dirs, files in os.walk(root, followlinks=True):
            try:
                st = os.stat(folder)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen:
                dirs[:] = []
                continue
            seen.add((st.st_dev, st.st_ino))
            rel_dir = os.path.relpath(folder, root)
            rel_dir = "" if rel_dir == "." else rel_dir
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not _excluded(
                f"{rel_dir}/{d}" if rel_dir else d, d, options.exclude))
            for name in sorted(files):
                rel = f"{rel_dir}/{name}" if rel_dir else name
                if name.endswith(SOURCE_SUFFIXES) or name.endswith(TMP_SUFFIX) \
                        or _excluded(rel, name, options.exclude):
                    continue
                src = os.path.join(folder, name)
                dest = os.path.join(base, rel)
                if not os.path.isfile(src):
                    skipped.append(f"{src}: not a regular file (or a broken link)")
                    continue
                if not _inside(os.path.dirname(dest), options.out_dir):  # before any mkdir
                    skipped.append(f"{dest}: its folder leads outside {options.out_dir}")
                    continue
                try:
                    os.makedirs(os.path.dirname(dest), exist_ok=True)
                    if os.path.isfile(dest) and not os.path.islink(dest) \
                            and filecmp.cmp(src, dest, shallow=True):
                        unchanged += 1
                        continue
                    with open(src, "rb") as fin:  # (links out, non-regular targets refused)
                        atomic_write(dest, fin, inside=options.out_dir)
                    shutil.copystat(src, dest)  # mode, and the times the next run compares
                    copied += 1
                except KlcError as e:
                    skipped.append(str(e))
                except OSError as e:
                    skipped.append(f"{dest}: {e.strerror or e}")
    return copied, unchanged, skipped


class _Writer:
    """The driver's one writing thread: files and journal lines in the order results
    arrive, so that the fsyncs overlap the work instead of stalling it. A Ctrl-C reaches the
    main thread only; ``close`` then finishes what was handed over, never half a write."""

    def __init__(self, handle: Callable[[Source, FileResult], None]) -> None:
        import queue
        import threading

        self._handle = handle
        self._queue: queue.Queue[tuple[Source, FileResult] | None] = queue.Queue(maxsize=512)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="klc-batch-writer",
                                        daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if self._error is None:
                try:
                    self._handle(*item)
                except BaseException as e:  # re-raised on the main thread by close()
                    self._error = e

    def put(self, src: Source, res: FileResult) -> None:
        if self._error is not None:
            self.close()
        self._queue.put((src, res))

    def close(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error


def _write(src: Source, res: FileResult, mode: str, journal: Journal | None,
           out_dir: str | None = None) -> None:
    """Write one result atomically. In place, the file must still hold the bytes that were
    read (else someone changed it meanwhile: it is left alone, and that is the result), and
    have no other hard link. With --out, nothing is written (not even a folder made) where a
    symbolic link already in the output folder leads out of it."""
    from klc.fsutil import atomic_write

    assert src.dest is not None and res.output is not None
    try:
        if mode == "in_place":
            if res.status != REWRITTEN:
                return
            if _sha(_read(src.dest)) != res.input_sha:
                res.status, res.output_sha = ERROR, ""
                res.reason = f"{src.path}: changed on disk during the batch; left as it is"
                return
            if journal is not None:
                journal.append({"key": src.real, "phase": "begin", "input_sha": res.input_sha,
                                "output_sha": res.output_sha, "result": res.to_json()})
        elif out_dir is not None:
            real, root = os.path.realpath(src.dest), os.path.realpath(out_dir)
            if os.path.commonpath([real, root]) != root:
                raise KlcError(f"{src.dest}: a symbolic link in the output folder leads out of "
                               f"it (to {real}); not written")
            os.makedirs(os.path.dirname(src.dest) or ".", exist_ok=True)
        else:
            os.makedirs(os.path.dirname(src.dest) or ".", exist_ok=True)
        atomic_write(src.dest, res.output, in_place=mode == "in_place",
                     inside=out_dir if mode != "in_place" else None)
    except (KlcError, OSError) as e:
        res.status, res.output_sha = ERROR, ""
        res.reason = str(e) if isinstance(e, KlcError) else f"{src.dest}: cannot write: {e}"


def iter_failures(summary: BatchSummary) -> Iterator[FileResult]:
    return (r for r in summary.results if r.failed)

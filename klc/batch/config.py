"""Batch configuration and results: what a batch runs (``BatchConfig``: rules, holes,
gate and optimize options), where (``BatchOptions``), and what each file gives back
(``FileResult``, ``BatchSummary``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import klc
from klc.content import json_sha256
from klc.errors import KlcError, shown, where

if TYPE_CHECKING:
    from klc.rule import Rule

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


_HELD: dict[str, list[str]] = {}  # by digest: BatchConfig.held_back of the loaded rules


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
    # without the gate, each rewritten file is compiled (nvcc where installed, else NVRTC)
    # with its original, and kept only if it compiles where the original did (off:
    # --no-compile-check)
    compile_check: bool = False
    # the gate's stages (--gate-stages): verify and profile need a GPU, and a batch that
    # asks for them on a machine without one refuses before writing (``check_gate_stages``)
    gate_stages: tuple[str, ...] = ("compile", "verify", "profile")
    # the command's -I/-D/--include-from (klc.cuda.flags, as $KLC_BUILD_FLAGS): local worker
    # processes inherit the environment, Ray tasks set it from here
    build_flags: str = field(default_factory=lambda: os.environ.get("KLC_BUILD_FLAGS", ""))
    # each hunk of a diff (--diff, an HTML report) names the rules that made it (--annotate);
    # it changes how a diff reads, never what is written, so it is not part of ``digest``
    annotate: bool = False

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
                    raise KlcError(f"{shown(p)}: no .rule files in this folder")
                files += [(str(f), _read_rule_text(f)) for f in found]
            elif path.exists():
                files.append((str(path), _read_rule_text(path)))
                named.append(str(path))
            else:
                raise KlcError(f"{shown(p)}: no such rule file or folder")
        return cls(rule_files=tuple(files), named_files=tuple(named), **kw)

    def load_rules(self) -> list[Rule]:
        """The rules, compiled: every problem of every file reported together (RuleError),
        a rule name defined twice refused, unknown ``rule_names`` refused."""
        from klc import plugins
        from klc.rule import RuleSet, select_rules
        from klc.rule.values import check_hole_names, resolve_holes

        plugins.load()  # (a spawned worker process loads the rules again)
        rules = list(RuleSet.load(self.rule_files).rules)  # every file's problems at once
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
        doc = {"klc": klc.__version__, "rules": self.rule_files, "names": self.rule_names,
               "holes": self.holes, "gate": self.gate, "optimize": self.optimize,
               "arch": self.arch, "gate_timeout": self.gate_timeout,
               "optimize_options": [(k, repr(v)) for k, v in self.optimize_options],
               "tree_only": self.tree_only, "named": self.named_files,
               "compile_check": self.compile_check, "build_flags": self.build_flags,
               "gate_stages": list(self.gate_stages) if self.gate else None}
        return json_sha256(doc)[:24]


def _read_rule_text(path: Path) -> str:
    from klc.fsutil import read_input

    data = read_input(path, "rule file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise KlcError(f"{where(str(path), line, col)}: not UTF-8 text") from None


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
    # the checks the written rewrite passed, in order (compile, verify, profile): [] for a
    # rewrite nothing checked (--no-compile-check, an original that does not compile)
    checks: list[str] = field(default_factory=list)
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
                "checks": self.checks, "elapsed_s": round(self.elapsed_s, 4)}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> FileResult:
        """A result read back (a journal line): every field of its type, or ValueError."""
        def typed(key: str, kind: type | tuple[type, ...], default: Any) -> Any:
            value = doc.get(key, default)
            if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
                raise ValueError(f"{key}: {type(value).__name__}")
            return value

        items = (typed("applied", list, []), typed("refused", list, []))
        if not all(isinstance(x, dict) and isinstance(x.get("rule", ""), str)
                   for lst in items for x in lst):
            raise ValueError("applied/refused: not rule entries")
        refused_by = typed("refused_by", dict, {})
        if not all(isinstance(k, str) and isinstance(v, int) for k, v in refused_by.items()):
            raise ValueError("refused_by")
        notes = typed("notes", list, [])
        if not all(isinstance(n, str) for n in notes):
            raise ValueError("notes")
        checks = typed("checks", list, [])
        if not all(isinstance(c, str) for c in checks):
            raise ValueError("checks")
        if typed("status", str, "") not in STATUSES:
            raise ValueError("status")
        return cls(path=typed("path", str, ""), status=doc["status"],
                   reason=typed("reason", str, ""), input_sha=typed("input_sha", str, ""),
                   output_sha=typed("output_sha", str, ""), applied=list(items[0]),
                   refused=list(items[1]), refused_by=dict(refused_by),
                   skipped=typed("skipped", int, 0), notes=list(notes),
                   gate=typed("gate", (dict, type(None)), None),
                   optimize=typed("optimize", (dict, type(None)), None),
                   checks=list(checks),
                   elapsed_s=float(typed("elapsed_s", (int, float), 0.0)))


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
    # --out: the other files of the tree that could not be copied into the mirror, and why
    copy_failures: list[str] = field(default_factory=list)

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
            **{f"checked_{k}": sum(r.status == REWRITTEN and checks_key(r.checks) == k
                                   for r in rs) for k in CHECK_KEYS},
            "sites_rewritten": sum(len(r.applied) for r in rs),
            "sites_refused_by_guard": sum(r.guard_refusals for r in rs),
            "resumed": self.resumed,
        }

    @property
    def failed(self) -> bool:
        return any(r.failed for r in self.results) or bool(self.copy_failures)

    def to_json(self) -> dict[str, Any]:
        return {"klc": klc.__version__, "config": self.config_digest, "executor": self.executor,
                "jobs": self.jobs, "gpus": self.gpus, "interrupted": self.interrupted,
                "notes": self.notes, "copy_failures": self.copy_failures,
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
        from klc.report import ShortPaths

        short = ShortPaths([r.path for r in self.results])  # (a table that fits the page)
        lines += ["", f"Paths are relative to `{short.root}`." if short.root else "",
                  "| file | status | checks | rules applied | refused | why |",
                  "| --- | --- | --- | --- | ---: | --- |"]
        for r in self.results:
            rules = ", ".join(sorted({a["rule"] for a in r.applied}))
            why = short.text(r.reason or ("; ".join(r.notes)))
            checks = ", ".join(r.checks) if r.status == REWRITTEN else ""
            lines.append(f"| `{short.path(r.path)}` | {r.status} | {checks or '-'} | {rules} | "
                         f"{sum(r.refused_by.values())} | "
                         f"{why.replace('|', '/').replace(chr(10), ' ')} |")
        return "\n".join(lines) + "\n"


def check_gate_stages(config: BatchConfig) -> None:
    """Refuse a gated batch whose stages need a GPU (verify, profile) on a machine that has
    none, before any file is read or written: a gate that would silently compile only is no
    gate. ``--gate-stages compile`` asks for the compile stage alone, explicitly."""
    if not config.gate:
        return
    from klc.gate import GPU_STAGES, STAGES, gpu_status

    unknown = [s for s in config.gate_stages if s not in STAGES]
    if unknown or not config.gate_stages:
        raise KlcError(f"--gate-stages {','.join(config.gate_stages)}: expected stages among "
                       f"{', '.join(STAGES)} (e.g. compile, or compile,verify,profile)")
    need = [s for s in STAGES if s in config.gate_stages and s in GPU_STAGES]
    if not need:
        return
    arch, why = gpu_status()
    if arch is None:
        raise KlcError(f"--gate: {' and '.join(need)} need{'s' if len(need) == 1 else ''} a "
                       "GPU and this machine has none "
                       f"({why.removeprefix('no GPU (').removesuffix(')')}); nothing was "
                       "written (--gate-stages compile gates by compiling alone)")


# what was checked of a rewritten file, by the last check it passed
CHECK_KEYS = ("profile", "verify", "compile", "none")


def checks_key(checks: Sequence[str]) -> str:
    """The summary's word for a rewrite's checks: its last stage, or ``none``."""
    return next((k for k in CHECK_KEYS[:-1] if k in checks), "none")


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
    "checked_profile": "rewritten files compiled, verified and profiled",
    "checked_verify": "rewritten files compiled and verified on a GPU (not profiled)",
    "checked_compile": "rewritten files compiled only (not verified on a GPU)",
    "checked_none": "rewritten files not checked at all",
    "sites_rewritten": "sites rewritten", "sites_refused_by_guard": "sites refused by a guard",
    "resumed": "files taken from the journal (--resume)",
}

"""Loading rules: text, a file, and ``RuleSet.load``, the one loader of a set of rule files
and folders (every problem of every file reported together; a rule name defined twice
refused), and picking rules by name."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from klc.errors import KlcError, shown, where
from klc.fsutil import read_input
from klc.rule.cache import cached_library
from klc.rule.checks import Errors
from klc.rule.compile import compile_spec
from klc.rule.defines import definitions, expand_spec
from klc.rule.model import Rule, RuleError
from klc.rule.registry import installed
from klc.rule.syntax import BadText, RuleSpec, parse_file

MAX_RULE_NESTING = 200  # parentheses, brackets and braces open at once in a rule file


def load_rules_text(text: str, path: str) -> list[Rule]:
    """Every rule of a rule file's text; RuleError lists all problems with file:line:col."""
    return _load_file(text, path).rules


@dataclass(frozen=True)
class _FileRules:
    """What one rule file holds once checked: its rules, and how many named guards it
    defines (``define guard``; those of the files it uses are theirs)."""

    rules: list[Rule]
    defines: int


def _load_file(text: str, path: str) -> _FileRules:
    """The one place rule text is read: whatever the text holds, the outcome is the file's
    rules and definitions or a KlcError naming the file (never another exception); nesting
    is bounded first."""
    check_nesting(text, path)
    check_size(text, path)
    try:
        return _load_rules_text(text, path)
    except KlcError:
        raise
    except BadText as e:
        raise KlcError(f"{where(path, e.line, e.col)}: {e.msg}") from None
    except RecursionError:
        raise KlcError(f"{shown(path)}: nested too deeply to compile (a guard or an anchor); split "
                       "it") from None


MAX_RULES = 1000  # rules in one file (the whole library holds a few dozen)
MAX_DIGITS = 1000  # digits in a row: an integer longer than this is not a number a rule means
_LONG_NUMBER = re.compile(rf"[0-9]{{{MAX_DIGITS + 1},}}")
_RULE_HEAD = re.compile(r"^[ \t]*rule[ \t]+[A-Za-z_]", re.M)


def check_size(text: str, path: str) -> None:
    """Bounds on what a rule file holds, checked on the text before it is parsed, so that
    neither time nor memory grows past them: at most MAX_RULES rules (100,000 took a
    minute to check), no number of more than MAX_DIGITS digits (Python refuses to convert
    one of 4,300; a hole's integers have at most 40)."""
    for heads, m in enumerate(_RULE_HEAD.finditer(text), 1):
        if heads > MAX_RULES:
            line = text.count("\n", 0, m.start()) + 1
            raise KlcError(f"{where(path, line, 1)}: more than {MAX_RULES} rules in one file; "
                           "split it")
    m = _LONG_NUMBER.search(text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        raise KlcError(f"{where(path, line, col)}: a number of {len(m.group(0))} digits (a "
                       f"rule's numbers have at most {MAX_DIGITS})")


def check_nesting(text: str, path: str) -> None:
    """Refuse text nested deeper than MAX_RULE_NESTING (the parsers recurse on nesting)."""
    if sum(text.count(c) for c in "([{") <= MAX_RULE_NESTING:
        return
    depth, line, col = 0, 1, 0  # (more than MAX_RULE_NESTING open at once: as the count above)
    for ch in text:
        col += 1
        if ch in "([{":
            depth += 1
            if depth > MAX_RULE_NESTING:
                raise KlcError(f"{where(path, line, col)}: nested more than "
                               f"{MAX_RULE_NESTING} deep")
        elif ch in ")]}":
            depth -= 1
        elif ch == "\n":
            line, col = line + 1, 0


def _load_rules_text(text: str, path: str) -> _FileRules:
    file = parse_file(text, path)
    errs = Errors(path)
    defs = definitions(file, errs)
    specs = [expand_spec(s, defs, errs) for s in file.rules]
    seen: dict[str, RuleSpec] = {}
    rules: list[Rule] = []
    for spec in specs:
        if spec.name in seen:
            first = seen[spec.name]
            errs.add(spec.line, spec.col, f"duplicate rule name {spec.name!r} (first defined "
                     f"at line {first.line}:{first.col})")
        seen.setdefault(spec.name, spec)
        rule = compile_spec(spec, errs)
        if rule is not None:
            rules.append(rule)
    if not specs and not file.defines:
        errs.add(1, 1, "no rule in this file")
    if errs.items:
        raise RuleError(errs.messages())
    return _FileRules(rules, len(file.defines))


def load_rules(path: str | Path) -> list[Rule]:
    """The rules of one ``.rule`` file (from the compiled library's cache when it holds
    them: ``klc.rule.cache``)."""
    data = read_input(path, "rule file")  # regular files only, bounded, never blocks
    text = _decode(data, str(path))

    def build() -> tuple[list[Rule], object]:
        rules = load_rules_text(text, str(path))
        return rules, _anchor_table(rules)

    vocabulary = _vocabulary()
    if vocabulary is None:
        return load_rules_text(text, str(path))
    return cached_library([(str(path), data)], build, _is_rule, _seed_anchors, vocabulary)


def _read_text(path: str | Path) -> str:
    """A rule file's text (a regular file only, bounded, never blocking; UTF-8)."""
    return _decode(read_input(path, "rule file"), str(path))


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise KlcError(f"{where(path, line, col)}: not UTF-8 text") from None


def _vocabulary() -> bytes | None:
    """The names of the rewrite kinds and predicates the loader compiles against; None when
    none are installed (the load then says so, uncached)."""
    try:
        plugins = installed()
    except KlcError:
        return None
    return " ".join([*sorted(plugins.edit_kinds), "|", *sorted(plugins.predicates)]).encode()


def _is_rule(value: object) -> bool:
    return isinstance(value, Rule)


def _anchor_table(rules: Sequence[Rule]) -> object:
    """The matcher's compiled anchors of these rules, to be stored beside them (None where
    no matcher is installed)."""
    compile_anchors = installed().compile_anchors
    return compile_anchors(rules) if compile_anchors is not None else None


def _seed_anchors(table: object) -> None:
    seed = installed().seed_anchors
    if table is not None and seed is not None:
        seed(table)


# a source of rules: a file or folder path, or (path, text) already read
Source = str | Path | tuple[str, str]


@dataclass(frozen=True)
class RuleSet:
    """Rules loaded from files and folders, and the problems found (``file:line:col:
    message`` each); a rule named twice keeps its first definition. ``defines``: the named
    guards the files define (``define guard``), each checked, in the files that loaded
    (counted where the files are read and checked: ``klc check``)."""

    rules: tuple[Rule, ...]
    errors: tuple[str, ...] = ()
    defines: int = 0

    @classmethod
    def load(cls, sources: Iterable[Source], *, strict: bool = True,
             check: bool = False) -> RuleSet:
        """The rules of every source: a ``.rule`` file, a folder (its ``*.rule`` files in
        name order) or a (path, text) pair already read. Nothing stops at a bad file: the
        problems of all of them are collected. ``strict``: raise them as one RuleError
        (else they are in ``errors``). ``check`` (``klc check``): a folder without rule files
        is a problem too."""
        errors: list[str] = []
        files: list[tuple[str, str | None]] = []
        for src in sources:
            if isinstance(src, tuple):
                files.append(src)
                continue
            path = Path(src)
            if path.is_dir():
                found = sorted(path.glob("*.rule"))
                if check and not found:
                    errors.append(f"{src}: no .rule files in this folder")
                files += [(str(f), None) for f in found]
            elif path.exists() or check:  # (klc check reads it as a file: "no such rule file")
                files.append((str(src), None))
            else:
                errors.append(f"{src}: no such rule file or folder")
        vocabulary = _vocabulary()
        read = None if check or errors or not files or vocabulary is None \
            else _read_all(files)
        if read is None:  # (text given as text, or a file that cannot be read as one)
            return cls._load_files(files, errors, strict)
        # files of rules only: the compiled library from its cache (klc.rule.cache) when
        # it holds these bytes, else loaded here and stored when the load succeeded
        loaded: list[RuleSet] = []

        def build() -> tuple[list[Rule], object]:
            loaded.append(cls._load_files([(p, text) for p, _, text in read], [], False))
            if loaded[0].errors:
                return [], None
            return list(loaded[0].rules), _anchor_table(loaded[0].rules)

        rules = cached_library([(p, data) for p, data, _ in read], build, _is_rule,
                               _seed_anchors, vocabulary or b"")
        if not loaded:
            return cls(tuple(rules))
        if strict and loaded[0].errors:
            raise RuleError(list(loaded[0].errors))
        return loaded[0]

    @classmethod
    def _load_files(cls, files: list[tuple[str, str | None]], errors: list[str],
                    strict: bool) -> RuleSet:
        rules: list[Rule] = []
        seen: dict[str, Rule] = {}
        defines = 0
        for path_, text in files:
            try:
                file = _load_file(_read_text(path_) if text is None else text, path_)
            except RuleError as e:
                errors.extend(e.errors)
                continue
            except KlcError as e:
                errors.append(str(e))
                continue
            defines += file.defines
            for r in file.rules:
                if r.name in seen:
                    errors.append(f"{where(r.path, r.line, r.col)}: duplicate rule name "
                                  f"{r.name!r} (first defined at {seen[r.name].location})")
                    continue
                seen[r.name] = r
                rules.append(r)
        errors = list(dict.fromkeys(errors))  # (a used file's problems, once)
        if strict and errors:
            raise RuleError(errors)
        return cls(tuple(rules), tuple(errors), defines)


def _read_all(files: list[tuple[str, str | None]]) -> list[tuple[str, bytes, str]] | None:
    """Every file's path, bytes and text; None when a source is text already or a file
    cannot be read as rule text (the loader then says why, as for any file)."""
    out = []
    for path, text in files:
        if text is not None:
            return None
        try:
            data = read_input(path, "rule file")
            out.append((path, data, _decode(data, path)))
        except KlcError:
            return None
    return out


def select_rules(rules: list[Rule], names: list[str] | None, path: str) -> list[Rule]:
    """The rules named with --rule (all when none named); an unknown name is an error."""
    if not names:
        return rules
    by_name = {r.name: r for r in rules}
    missing = [n for n in names if n not in by_name]
    if missing:
        known = ", ".join(sorted(by_name)) or "none"
        raise KlcError(f"{shown(path)}: no rule named {', '.join(missing)} (rules here: {known})")
    return [by_name[n] for n in names]


def load_rule_dir(directory: str | Path) -> list[Rule]:
    """The rules of a folder that must exist (``RuleSet.load`` of it): every ``*.rule`` file
    in name order, a rule name used in two files an error, all problems reported together."""
    if not Path(directory).is_dir():
        raise KlcError(f"{directory}: no such rule folder")
    return list(RuleSet.load([directory]).rules)

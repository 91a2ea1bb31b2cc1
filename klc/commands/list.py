"""``klc list``: which rules apply to kernel files (or folders of them), where, and
(``--all``) why the others do not; as text, JSON, SARIF or GitHub annotations
(:mod:`klc.findings`). The files are listed in worker processes by :mod:`klc.batch.listing`;
this module chooses and lays out what they found:

- ``--only``/``--exclude`` keep the rules whose names match (globs);
- where two rules rewrite the same code the same way (``unroll_loop`` and
  ``add_bare_pragma_unroll`` on one loop: the same anchor, the same code written but for
  hole values), one step before any format (``fold_agreeing``) keeps the site of the first
  rule and names the others in it (JSON: ``"also"``; SARIF: the result's ``also`` property
  and its message; GitHub: the message; text: "the same rewrite: ..."); ``--full`` keeps
  every site on its own;
- the text listing is compact by default: per file, the structural skills first (each site
  with its intent), then each cheap one once, with the other lines it applies at.
  ``--full`` (and ``--all``) show each site on its own line;
- ``--keep-going`` (the default for ``--format sarif|github``): a file the parser cannot
  read whole, or not at all, is a finding (text: a line of the listing; SARIF: a result of
  the rule ``klc-parse``; GitHub: a warning) and the command exits 0;
- ``--rules``: the rules themselves, by library and file, with their intent (the names
  ``klc apply`` takes).

Exit 0: listed; 2: a file unreadable or with syntax errors (the rest is still listed),
unless ``--keep-going``; an input that does not exist, a filter that names no rule.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from klc.commands import args as arg_types
from klc.commands.console import err, out
from klc.errors import KlcError, shown
from klc.report import json_text


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("list", help="list the rules that apply to kernel files (or folders "
                       "of them), where, and (--all) why the others do not")
    p.add_argument("kernel", metavar="KERNEL", nargs="*",
                   help=".cu/.cuh files or folders (walked for .cu/.cuh files)")
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help="worker processes (default: one per CPU where the files are large "
                   "enough to pay for them, about 0.5 MB of source each, and one on macOS; "
                   "files the result cache holds are read in the main process)")
    p.add_argument("--tree-only", action="store_true",
                   help="guards use tree-sitter facts only, never libclang: faster; a guard "
                   "that needs clang then says so and fails closed")
    p.add_argument("--skills", action="append", metavar="DIR_OR_RULE",
                   help="rule files or folders (default: the skills library)")
    p.add_argument("--all", action="store_true",
                   help="also list matches whose context or guards failed, with the reason")
    p.add_argument("--json", action="store_true", help="print JSON instead of text "
                   "(--format json)")
    p.add_argument("--format", choices=("text", "json", "sarif", "github"), default=None,
                   help="text (default), json, sarif (SARIF 2.1.0 for code scanning) or "
                   "github (workflow annotations)")
    p.add_argument("--only", action="append", default=[], metavar="RULE_GLOB",
                   help="list only the rules whose names match (repeatable; globs: 'add_*')")
    p.add_argument("--exclude", action="append", default=[], metavar="RULE_GLOB",
                   help="leave out the rules whose names match (repeatable; globs)")
    p.add_argument("--full", action="store_true",
                   help="every site on its own, in every format (default: a rule that "
                   "rewrites a site the same way as another is named in that site's entry; "
                   "text: structural skills first, each cheap skill once per file with its "
                   "other lines)")
    p.add_argument("--keep-going", action=argparse.BooleanOptionalAction, default=None,
                   help="a file the parser cannot read is a finding, not a failure: exit 0 "
                   "(the default for --format sarif|github)")
    p.add_argument("--rules", action="store_true",
                   help="list the rules themselves (default: the skills and passes "
                   "libraries, or --skills), with their intent")


def run(args: argparse.Namespace) -> int:
    from klc.batch.listing import kernel_files, list_paths, loaded_rules
    from klc.rule import default_skill_dirs

    if args.jobs is not None:
        arg_types.check_jobs(args.jobs)
    if args.json and args.format not in (None, "json"):
        raise KlcError(f"--json and --format {args.format}: give one of them")
    if args.rules:
        return _list_rules(args)
    if not args.kernel:
        raise KlcError("list: give KERNEL files or folders (or --rules)")
    args.json = args.json or args.format == "json"
    keep_going = args.keep_going if args.keep_going is not None else \
        args.format in ("sarif", "github")
    rule_paths = args.skills or default_skill_dirs()
    paths, problems = kernel_files(args.kernel)
    full = args.full or args.all
    found = list_paths(paths, rule_paths, show_all=args.all, tree_only=args.tree_only,
                       jobs=args.jobs, json_sites=args.json or args.format in ("sarif",
                                                                                "github"))
    first = next(found, None)  # (the rules are loaded and checked before the first file)
    keep = _rule_filter(loaded_rules(), args.only, args.exclude)
    shape = _Shapes({r.name: r for r in loaded_rules() if r.name in keep})
    for path, why in problems:
        err.print(f"klc: error: {shown(path)}: {why}", markup=False)
    failed = [bool(problems)]

    def listed() -> Iterator[Any]:  # each file as it comes, filtered; errors on stderr
        for listing in itertools.chain([first] if first is not None else [], found):
            listing.sites = [s for s in listing.sites if s["rule"] in keep]
            listing.rows = [r for r in listing.rows if r.rule in keep]
            if not args.full:  # the one deduplication, before any format
                fold_agreeing(listing, shape)
            if not keep_going:  # else each is a finding of the listing
                failed[0] = failed[0] or bool(listing.error or listing.problems)
                for problem in _unread(listing):
                    err.print(f"klc: error: {problem}", markup=False)
            yield listing

    if args.format in ("sarif", "github"):  # findings for code scanning (klc/findings.py)
        from klc.findings import write_findings

        write_findings(args.format, list(listed()), rule_paths, problems,
                       keep_going=keep_going)
    elif args.json:
        listings = list(listed())
        sites = [s for lst in listings for s in lst.sites]
        if keep_going:
            sites += [_problem_json(lst.path, p) for lst in listings for p in _unread(lst)]
        print(json_text(sites))
    else:  # printed file by file, as the workers send them
        rules = {r.name: r for r in loaded_rules() if r.name in keep}
        _print_text(listed(), rules, full, shape, len(paths) == 1, keep_going)
    return 2 if failed[0] else 0


def _rule_filter(rules: list[Any], only: list[str], exclude: list[str]) -> set[str]:
    """The names of the rules ``--only``/``--exclude`` keep; a glob that names no rule is an
    error (a typo would otherwise list nothing and pass)."""
    from fnmatch import fnmatchcase

    names = [r.name for r in rules]
    for flag, globs in (("--only", only), ("--exclude", exclude)):
        for g in globs:
            if not any(fnmatchcase(n, g) for n in names):
                raise KlcError(f"{flag} {g!r}: no rule of {len(names)} matches it (klc list "
                               "--rules lists them)")
    return {n for n in names
            if (not only or any(fnmatchcase(n, g) for g in only))
            and not any(fnmatchcase(n, g) for g in exclude)}


def _unread(listing: Any) -> list[str]:
    """What could not be read of a file: why it could not be listed at all, or the syntax
    problems left after recovery (the rest of it is listed)."""
    return [listing.error] if listing.error else list(listing.problems)


def _problem_json(path: str, problem: str) -> dict[str, Any]:
    from klc.findings import problem_position

    line, col, what = problem_position(path, problem)
    return {"rule": "klc-parse", "file": path, "line": line or 1, "col": col or 1,
            "applicable": False, "why_not": what, "refused_by": "parse",
            "intent": "klc could not read this code: the rest of the file is listed"}


def _print_text(listings: Iterable[Any], rules: dict[str, Any], full: bool, shape: Any,
                one_file: bool, keep_going: bool) -> None:
    from klc.batch.listing import render_pieces
    from klc.findings import problem_position

    info = _rule_info(rules)
    plain = not (out.is_terminal or out.color_system is not None)
    for listing in listings:
        pieces: list[tuple[str, str]] = []
        for problem in _unread(listing) if keep_going else ():
            line, col, what = problem_position(listing.path, problem)
            rest = "; the rest of the file is listed" if listing.problems else ""
            name = shown(listing.path)
            pieces += [(f"{name}:{line}:{col}" if line else name, "yellow"),
                       (": ", ""), ("klc-parse", "bold"), (f": not read: {what}{rest}\n", "")]
        if listing.rows:
            pieces += render_pieces(listing.path, listing.rows, info) if full else \
                _compact(listing.path, listing.rows, shape, info)
        if not pieces:
            if one_file and not listing.error:
                out.print(f"{shown(listing.path)}: no rule applies ({len(rules)} rules, "
                          f"{listing.refused} refused matches; --all shows why)",
                          markup=False)
            continue
        if plain:  # a pipe or a file: the text as it is
            out.file.write("".join(p for p, _ in pieces).rstrip() + "\n")
        else:  # a terminal: one rich Text styled by span (no markup to parse: a path or a
            from rich.text import Text  # reason holding "[" prints as it is)

            text = Text()
            for piece, style in pieces:
                text.append(piece, style)
            text.rstrip()
            out.print(text)


def _rule_info(rules: dict[str, Any]) -> dict[str, tuple[str, str, str, str]]:
    """What ``render_pieces`` shows of each rule: its location, intent, verdict and holes."""
    return {name: (r.location, (r.card.intent or r.description) + (
        " (changes results: see the card's precision)" if r.card.precision else ""),
        r.card.verdict or "", " ".join(f"?{h}" for h in r.holes)) for name, r in rules.items()}


_HOLE = re.compile(r"\?\w+")


def rewrite_key(rule: Any) -> tuple[str, ...]:
    """What a rule does, for telling two rules that rewrite the same code the same way: its
    anchor and the code each edit writes, blanks and hole values left out."""
    def norm(text: str) -> str:
        return " ".join(_HOLE.sub(" ", text).split())

    return (norm(rule.anchor), *(f"{type(e).__name__}:{norm(t)}" for e in rule.edits
                                 for t in (e.templates() or (repr(e),))))


class _Shapes:
    """What the compact listing needs of each rule, worked out once per run: its order, its
    rewrite key (``rewrite_key``) and whether it is structural (``klc.optimize.headroom``)."""

    def __init__(self, rules: dict[str, Any]) -> None:
        from klc.rule.reach import reach

        self.order = {name: i for i, name in enumerate(rules)}
        # (each worked out for the rules a listing names, when it first does: a run over a
        # few files names few of them)
        self.keys = _PerRule(rules, rewrite_key)
        self.structural = _PerRule(rules, lambda r: reach(r).structural)


class _PerRule(dict):  # type: ignore[type-arg]
    """A value per rule by its name, made from the rule on first use; ``in`` says whether
    the name is a rule's."""

    def __init__(self, rules: dict[str, Any], make: Callable[[Any], Any]) -> None:
        super().__init__()
        self.rules, self.make = rules, make

    def __contains__(self, name: object) -> bool:
        return name in self.rules

    def __missing__(self, name: str) -> Any:
        value = self[name] = self.make(self.rules[name])
        return value


def fold_agreeing(listing: Any, shape: _Shapes) -> None:
    """Fold the sites of a file's listing that another rule rewrites the same way (the same
    place, the same ``rewrite_key``) into the site of the first rule (the rules' order), which
    names them (``also``: a site's JSON key, a row's field); refused matches are kept as they
    are. The listing's order is kept."""
    order, keys = shape.order, shape.keys

    def fields(s: Any) -> tuple[str, int, int, bool]:
        return (s["rule"], s["line"], s["col"], s["applicable"]) if isinstance(s, dict) \
            else (s.rule, s.line, s.col, s.applicable)

    for attr in ("sites", "rows"):
        items = getattr(listing, attr)
        first: dict[tuple[int, int, tuple[str, ...]], int] = {}  # place -> the kept item
        also: dict[int, list[str]] = {}
        folded: set[int] = set()
        for i in sorted(range(len(items)), key=lambda i: (*fields(items[i])[1:3],
                                                          order.get(fields(items[i])[0], 0))):
            rule, line, col, ok = fields(items[i])
            if not ok or rule not in keys:
                continue
            place = (line, col, keys[rule])
            if place in first and fields(items[first[place]])[0] != rule:
                also.setdefault(first[place], []).append(rule)
                folded.add(i)
            else:
                first.setdefault(place, i)
        kept = []
        for i, s in enumerate(items):
            if i in folded:
                continue
            names = list(dict.fromkeys(also.get(i, ())))
            if isinstance(s, dict):
                kept.append({**s, "also": names} if fields(s)[3] else s)
            else:
                kept.append(s._replace(also=tuple(names)))
        setattr(listing, attr, kept)


def _compact(path: str, rows: list[Any], shape: Any,
             info: dict[str, tuple[str, str, str, str]]) -> list[tuple[str, str]]:
    """A file's compact listing (module doc): structural skills first, cheap ones grouped by
    rule (the rules agreeing with a site are folded into it already: ``fold_agreeing``)."""
    from klc.batch.listing import render_pieces

    order, structural = shape.order, shape.structural
    pieces: list[tuple[str, str]] = []
    groups: dict[str, list[Any]] = {}
    for row in sorted(rows, key=lambda r: (r.line, r.col, order.get(r.rule, 0))):
        if structural[row.rule] or not row.applicable:
            pieces += render_pieces(path, [row._replace(also=())], info)
            pieces += _agreeing([row])
        else:
            groups.setdefault(row.rule, []).append(row)
    for _, group in sorted(groups.items(), key=lambda kv: order.get(kv[0], 0)):
        pieces += render_pieces(path, [group[0]._replace(also=())], info)
        if len(group) > 1:
            lines = ", ".join(str(line) for line in dict.fromkeys(r.line for r in group[1:]))
            pieces.append((f"    and {len(group) - 1} more site"
                           f"{'s' if len(group) > 2 else ''} in this file, at line"
                           f"{'s' if ',' in lines else ''} {lines}\n", "dim"))
        pieces += _agreeing(group)
    return pieces


def _agreeing(sites: list[Any]) -> list[tuple[str, str]]:
    """The line naming the rules that rewrite these sites the same way (and at how many of
    them, where not at all)."""
    counts: dict[str, int] = {}
    for row in sites:
        for other in row.also:
            counts[other] = counts.get(other, 0) + 1
    if not counts:
        return []
    said = ", ".join(name + ("" if n >= len(sites) else f" (at {n} of them)")
                     for name, n in counts.items())
    return [(f"    the same rewrite: {said}\n", "dim")]


def _list_rules(args: argparse.Namespace) -> int:
    """``klc list --rules``: every rule of the libraries, by file, with its reach and
    intent; a file's name (``fast_math``) and a rule's (``add_restrict``) are what ``klc
    apply`` takes for a built-in rule."""
    from pathlib import Path

    from klc.rule import RuleSet, builtin_rule, default_libraries
    from klc.rule.reach import reach

    sources = args.skills or [str(d) for d in default_libraries()]
    rules = list(RuleSet.load(sources).rules)
    keep = _rule_filter(rules, args.only, args.exclude)
    by_file: dict[str, list[Any]] = {}
    for r in rules:
        if r.name in keep:
            by_file.setdefault(r.path, []).append(r)
    if args.json:
        print(json.dumps([{"rule": r.name, "kind": r.kind, "file": r.path, "line": r.line,
                           "reach": reach(r).describe(), "verdict": r.card.verdict or None,
                           "intent": r.card.intent or r.description}
                          for group in by_file.values() for r in group], indent=2))
        return 0
    for path, group in by_file.items():
        named = builtin_rule(Path(path).stem)  # (a pass file named as a skill file is not)
        hint = f" (klc apply {Path(path).stem} KERNEL: all of them)" if named and \
            Path(named[0]).resolve() == Path(path).resolve() else ""
        out.print(f"{_shown(path)}{hint}", markup=False, highlight=False)
        for r in group:
            shape = "structural" if reach(r).structural else "cheap"
            verdict = f", {r.card.verdict}" if r.card.verdict else ""
            out.print(f"  {r.name}: {r.kind}, {shape}{verdict}", markup=False,
                      highlight=False)
            out.print(f"      {r.card.intent or r.description}", markup=False,
                      highlight=False)
    return 0


def _shown(path: str) -> str:
    """A path as a listing shows it: relative to the working folder where under it."""
    import os

    rel = os.path.relpath(path)
    return path if rel.startswith(os.pardir) else rel

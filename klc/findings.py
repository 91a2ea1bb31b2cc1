"""``klc list`` as findings where developers look: SARIF 2.1.0 (a pull request's
code-scanning view, an editor's SARIF viewer) and GitHub workflow annotations.

Both are made from the plain listing of each file (``klc.report.site_json`` dicts):

- SARIF: one run of the tool ``klc``; one ``reportingDescriptor`` per rule that has a
  result, whose ``help`` is the rule's card (intent, where, conditions, measured effects,
  pitfalls, verdict); one result per applicable site (``level: note``: an optimization that
  applies, not a defect), located at the anchor's match (file, line and column, end line and
  column, columns in Unicode code points), with the function, holes and the card's verdict
  in its properties and a fingerprint that survives lines moving (rule, function, bound
  code); the rules that rewrite the same code the same way, folded into the site by ``klc
  list`` (``also``), are in its properties and its message. With ``--all``, each refused
  match is a result too, of ``kind: notApplicable`` and ``level: none`` (SARIF's rule for
  any kind but ``fail``), whose message is the why-not reason. A file that could not be
  listed, or a syntax error left in one after recovery (the rest of it is listed), is a
  result of the rule ``klc-parse`` (``level: warning``) with ``keep_going`` (``klc list
  --keep-going``, the default for these formats): valid CUDA that klc's parser cannot read
  is klc's limit, not a failure of the scan. Without it, it is an error notification of the
  invocation, whose ``executionSuccessful`` is then false.
- GitHub: one ``::notice file=…,line=…,col=…,endLine=…,endColumn=…,title=…::message``
  workflow command per site, its message naming the rules folded into it (refused ones
  with ``--all`` too, titled "does not apply"), and for a file that could not be listed
  and a syntax error left in one, ``::warning`` with ``keep_going``, else ``::error``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import klc
from klc.content import json_sha256
from klc.measurements import measured

PARSE_RULE = "klc-parse"  # the rule of a finding "klc could not read this code"
PARSE_HELP = ("klc's parser (tree-sitter-cuda, with its macro recovery) could not read this "
              "code: no rule was tried in it. The rest of the file was listed. The code may "
              "well be valid CUDA: this is a limit of klc, not a defect of the code.")
SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")


def card_text(rule: Any, markdown: bool = False) -> str:
    """A rule's card as text (or Markdown): what a finding's help shows."""
    c, m = rule.card, measured(rule)
    items: list[tuple[str, str | Sequence[str]]] = [
        ("Intent", c.intent or rule.description), ("Where", c.where),
        ("Conditions", c.conditions), ("Measured effect", m.effect),
        ("Pitfalls", c.pitfalls), ("Precision", c.precision),
        ("Verdict", c.verdict or "hand-written (not measured)"),
        ("Learned from", m.provenance)]
    lines = []
    for label, value in items:
        if not value:
            continue
        values = [value] if isinstance(value, str) else list(value)
        if markdown:
            if len(values) == 1:
                lines.append(f"**{label}**: {values[0]}")
            else:
                lines.append(f"**{label}**:\n" + "\n".join(f"- {v}" for v in values))
        else:
            lines.append(f"{label}: " + "; ".join(values))
    where = f"Rule {rule.name} ({rule.kind}), defined at {rule.location}."
    lines.append(where)
    return ("\n\n" if markdown else "\n").join(lines)


class _Columns:
    """Byte columns (klc's, like clang's) to Unicode code point columns, per file."""

    def __init__(self) -> None:
        self._lines: dict[str, list[bytes] | None] = {}

    def __call__(self, path: str, line: int, col: int) -> int:
        if path not in self._lines:
            try:
                self._lines[path] = Path(path).read_bytes().split(b"\n")
            except OSError:
                self._lines[path] = None
        lines = self._lines[path]
        if lines is None or not 0 < line <= len(lines):
            return col
        return len(lines[line - 1][: col - 1].decode("utf-8", "replace")) + 1


def _uri(path: str) -> str:
    """A relative path as a POSIX URI reference (relative to the working folder, as code
    scanning wants paths from the repository root); an absolute one as a file: URI."""
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.relative_to(Path.cwd())
        except ValueError:
            return p.as_uri()
    return p.as_posix()


def _relative(where: str) -> str:
    """A rule's ``path:line`` relative to the working folder where it lies under it."""
    p = Path(where)
    try:
        return p.relative_to(Path.cwd()).as_posix() if p.is_absolute() else where
    except ValueError:
        return where


_POSITION = re.compile(r"^(?P<path>.*?):(?P<line>\d+):(?P<col>\d+): (?P<what>.*)$", re.S)


def problem_position(path: str, problem: str) -> tuple[int, int, str]:
    """(line, col, message) of a problem ``file:line:col: message``; (0, 0, message) for
    one without a position (``file: message``)."""
    m = _POSITION.match(problem)
    if m is not None and m.group("path") == path:
        return int(m.group("line")), int(m.group("col")), m.group("what")
    return 0, 0, problem.removeprefix(f"{path}: ")


def _unread(listing: Any) -> list[str]:
    """Why a file could not be listed, or the syntax problems left in it after recovery."""
    return [listing.error] if listing.error else list(getattr(listing, "problems", ()))


def _fingerprint(site: dict[str, Any]) -> str:
    bound = sorted((k, v.get("text", "")) for k, v in site.get("bindings", {}).items())
    return json_sha256([site["rule"], site.get("function", ""), bound])[:32]


def _message(site: dict[str, Any]) -> str:
    fn = f" in {site['function']}" if site.get("function") else ""
    if not site["applicable"]:
        return f"{site['rule']} does not apply here{fn}: {site.get('why_not') or 'refused'}"
    holes = " ".join(f"?{h}" for h in site.get("holes") or {})
    verdict = site.get("verdict")
    extra = [f"holes {holes}"] if holes else []
    if verdict:
        extra.append(f"card: {verdict}")
    if site.get("also"):  # the rules that rewrite this code the same way (klc list folds them)
        extra.append(f"the same rewrite: {', '.join(site['also'])}")
    return (f"{site['rule']} applies{fn}: {site.get('intent') or ''}".rstrip(": ")
            + (f" ({'; '.join(extra)})" if extra else ""))


def sarif_log(listings: Iterable[Any], rules: Sequence[Any],
              problems: Sequence[tuple[str, str]] = (), keep_going: bool = False
              ) -> dict[str, Any]:
    """The SARIF 2.1.0 log of ``klc list``: ``listings`` are ``FileListing``-like objects
    (``path``, ``sites`` as site_json dicts, ``error``); ``rules`` the rules listed (for the
    cards); ``problems`` (path, why) of inputs that could not be walked; ``keep_going``:
    what could not be read of a file is a ``klc-parse`` result (module doc)."""
    by_name = {r.name: r for r in rules}
    columns = _Columns()
    descriptors: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    for path, why in problems:
        notifications.append({"level": "error", "message": {"text": f"{path}: {why}"}})
    for listing in listings:
        for problem in _unread(listing):
            if keep_going:
                if PARSE_RULE not in index:
                    index[PARSE_RULE] = len(descriptors)
                    descriptors.append(_parse_descriptor())
                results.append(_parse_result(listing.path, problem, index[PARSE_RULE],
                                             columns))
            else:
                notifications.append({"level": "error", "message": {"text": problem},
                                      "locations": [{"physicalLocation": {"artifactLocation": {
                                          "uri": _uri(listing.path)}}}]})
        for site in listing.sites:
            name = site["rule"]
            if name not in index:
                index[name] = len(descriptors)
                descriptors.append(_descriptor(by_name.get(name), site))
            path = site.get("file") or listing.path
            region = {"startLine": site["line"],
                      "startColumn": columns(path, site["line"], site["col"]),
                      "endLine": site["end_line"],
                      "endColumn": columns(path, site["end_line"], site["end_col"])}
            result: dict[str, Any] = {
                "ruleId": name, "ruleIndex": index[name],
                "message": {"text": _message(site)},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": _uri(path)}, "region": region}}],
                "partialFingerprints": {"klcSite/v1": _fingerprint(site)},
                "properties": {"function": site.get("function") or "",
                               "holes": sorted(site.get("holes") or {}),
                               "verdict": site.get("verdict") or "hand-written"},
            }
            if site["applicable"]:
                result["level"] = "note"
                result["properties"]["also"] = list(site.get("also") or ())
            else:
                result["kind"] = "notApplicable"
                result["level"] = "none"
                result["properties"]["whyNot"] = site.get("why_not") or ""
                result["properties"]["refusedBy"] = site.get("refused_by") or ""
            if site.get("function"):
                result["locations"][0]["logicalLocations"] = [
                    {"name": site["function"], "kind": "function"}]
            results.append(result)
    invocation: dict[str, Any] = {"executionSuccessful": not notifications}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {"name": "klc", "version": klc.__version__,
                                "semanticVersion": klc.__version__, "rules": descriptors}},
            "invocations": [invocation],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def _parse_descriptor() -> dict[str, Any]:
    return {"id": PARSE_RULE, "name": PARSE_RULE,
            "shortDescription": {"text": "klc could not read this code"},
            "fullDescription": {"text": PARSE_HELP}, "help": {"text": PARSE_HELP},
            "defaultConfiguration": {"level": "warning"},
            "properties": {"tags": ["cuda", "klc"]}}


def _parse_result(path: str, problem: str, rule_index: int, columns: _Columns
                  ) -> dict[str, Any]:
    line, col, what = problem_position(path, problem)
    location: dict[str, Any] = {"artifactLocation": {"uri": _uri(path)}}
    if line:
        location["region"] = {"startLine": line, "startColumn": columns(path, line, col)}
    return {"ruleId": PARSE_RULE, "ruleIndex": rule_index, "level": "warning",
            "message": {"text": f"klc could not read this code: {what}"},
            "locations": [{"physicalLocation": location}]}


def _descriptor(rule: Any, site: dict[str, Any]) -> dict[str, Any]:
    name = site["rule"]
    intent = site.get("intent") or name
    d: dict[str, Any] = {"id": name, "name": name,
                         "shortDescription": {"text": intent},
                         "defaultConfiguration": {"level": "note"},
                         "properties": {"tags": ["cuda", "performance", site.get("kind") or
                                                 "skill"],
                                        "ruleFile": _relative(site.get("rule_location")
                                                              or "")}}
    if rule is not None:
        d["fullDescription"] = {"text": rule.description or intent}
        d["help"] = {"text": card_text(rule), "markdown": card_text(rule, markdown=True)}
        if rule.card.verdict:
            d["properties"]["verdict"] = rule.card.verdict
    return d


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def github_annotations(listings: Iterable[Any],
                       problems: Sequence[tuple[str, str]] = (), keep_going: bool = False
                       ) -> list[str]:
    """GitHub Actions workflow commands, one line per site (``::notice``) and per file that
    could not be read (``::warning`` with ``keep_going``, else ``::error``)."""
    columns = _Columns()
    lines = [f"::error::{_escape_data(f'{path}: {why}')}" for path, why in problems]
    for listing in listings:
        for problem in _unread(listing):
            props = f"file={_escape_property(listing.path)}"
            if keep_going:
                line, col, what = problem_position(listing.path, problem)
                if line:
                    props += f",line={line},col={columns(listing.path, line, col)}"
                lines.append(f"::warning {props},title=klc could not read this code::"
                             f"{_escape_data(what)}")
            else:
                lines.append(f"::error {props}::{_escape_data(problem)}")
        for site in listing.sites:
            path = site.get("file") or listing.path
            title = (f"klc: {site['rule']}" if site["applicable"]
                     else f"klc: {site['rule']} does not apply")
            props = {"file": path, "line": site["line"],
                     "col": columns(path, site["line"], site["col"]),
                     "endLine": site["end_line"],
                     "endColumn": columns(path, site["end_line"], site["end_col"]),
                     "title": title}
            head = ",".join(f"{k}={_escape_property(str(v))}" for k, v in props.items())
            lines.append(f"::notice {head}::{_escape_data(_message(site))}")
    return lines


def write_findings(fmt: str, listings: Sequence[Any], rule_paths: Sequence[str],
                   problems: Sequence[tuple[str, str]] = (), keep_going: bool = False) -> None:
    """Print ``klc list``'s findings in ``fmt`` (``sarif`` or ``github``) on stdout."""
    import sys

    if fmt == "sarif":
        from klc.rule.ruleset import RuleSet

        rules = list(RuleSet.load(rule_paths).rules)
        log = sarif_log(listings, rules, problems, keep_going)
        sys.stdout.write(json.dumps(log, indent=2) + "\n")
    elif fmt == "github":
        text = "\n".join(github_annotations(listings, problems, keep_going))
        sys.stdout.write(text + ("\n" if text else ""))
    else:
        raise ValueError(f"unknown findings format {fmt!r}")
    sys.stdout.flush()

"""The rule printer: a ``Rule`` back in the rule language. Loading the printed text gives an
equal rule (locations aside); ``klc learn`` writes the inverse skills to ``skills/`` with it.
Each rewrite clause prints itself (``Edit.lines``)."""

from __future__ import annotations

import json
import re

from klc.rule.code import IDENT_RE
from klc.rule.guard import guard_text
from klc.rule.holes import HoleDecl
from klc.rule.model import Rule


def string(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _bare_or_string(v: int | str) -> str:
    text = str(v)
    if isinstance(v, int) or IDENT_RE.fullmatch(text) or re.fullmatch(r"-?[0-9]+", text):
        return text
    return string(text)


def block(keyword: str, code: str) -> list[str]:
    return [f"  {keyword}: ```"] + [f"    {ln}" if ln else "" for ln in code.split("\n")] + \
        ["  ```"]


def rule_to_text(rule: Rule) -> str:
    """The rule in the rule language; ``load_rules_text`` of it gives an equal rule."""
    out = [f"rule {rule.name} {{", f"  kind: {rule.kind}"]
    if rule.description:
        out.append(f"  description: {string(rule.description)}")
    out.append(f"  context: {', '.join(rule.context)}")
    if rule.anchors:  # alternation: each branch a code block
        out.append("  anchor any {")
        for branch in rule.anchors:
            out += ["    ```"] + [f"      {ln}" if ln else "" for ln in branch.split("\n")] + \
                ["    ```"]
        out.append("  }")
    else:
        out += block("anchor", rule.anchor)
    kinds_of: dict[str, list[str]] = {}
    for name, kind in rule.metavar_kinds:
        kinds_of.setdefault(name, []).append(kind)
    out += [f"  metavar ${name}: {', '.join(kinds)}" for name, kinds in kinds_of.items()]
    if rule.isos_off:
        out.append(f"  isomorphisms: {', '.join('-' + n for n in rule.isos_off)}")
    if rule.guard is not None:
        out.append(f"  guard: {guard_text(rule.guard)}")
    for e in rule.edits:
        out += e.lines(rule)
    out += [f"  {ln}" for h in rule.holes.values() for ln in _hole_lines(h)]
    c = rule.card
    items = [(k, v) for k, v in (("intent", c.intent), ("where", c.where),
                                 ("conditions", c.conditions), ("precision", c.precision)) if v]
    items += [("effect", v) for v in c.effect] + [("pitfalls", v) for v in c.pitfalls] + \
        [("provenance", v) for v in c.provenance]
    if c.verdict:
        items.append(("verdict", c.verdict))
    if items:
        out.append("  card {")
        out += [f"    {k}: {string(v)}" for k, v in items]
        out.append("  }")
    inv = rule.inverse
    if inv is not None:
        out.append("  inverse {")
        if inv.name:
            out.append(f"    name: {inv.name}")
        if inv.family:
            out.append(f"    family: {inv.family}")
        if inv.description:
            out.append(f"    description: {string(inv.description)}")
        if inv.guard is not None:
            out.append(f"    guard: {guard_text(inv.guard)}")
        out += [f"    {ln}" for h in inv.holes.values() for ln in _hole_lines(h)]
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def _hole_lines(h: HoleDecl) -> list[str]:
    line = f"hole {h.name}: {h.type}"
    if h.type == "int" and h.values is not None:
        line += " in {" + ", ".join(str(v) for v in h.values) + "}"
    elif h.type == "int":
        line += f" in {h.lo}..{h.hi}"
    elif h.type == "enum" and h.values is not None:
        line += " {" + ", ".join(_bare_or_string(v) for v in h.values) + "}"
    if h.default is not None:
        default = string(str(h.default)) if h.type in ("expr", "stmts") \
            else _bare_or_string(h.default)
        line += f" default {default}"
    return [line]

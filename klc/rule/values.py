"""The values a run gives a rule's holes: those the user gives (``--hole``), checked against
each hole's domain (``klc.rule.holes``), else the defaults; and the refusal of a ``--hole``
that no selected rule declares."""

from __future__ import annotations

from typing import TYPE_CHECKING

from klc.errors import KlcError

if TYPE_CHECKING:
    from klc.rule.model import Rule


def resolve_holes(rule: Rule, given: dict[str, str], strict: bool = True) -> dict[str, str]:
    """Hole values for a rule: given ones validated against their domain, else defaults.

    With ``strict``, a hole that has neither a value nor a default is an error (before any
    rewrite happens); otherwise it stays unfilled, for listing.
    """
    values: dict[str, str] = {}
    for name, decl in rule.holes.items():
        if name in given:
            try:
                values[name] = decl.validate(given[name])
            except KlcError as e:  # (the rule that declares the hole, by file:line:col)
                raise KlcError(f"{rule.location}: {rule.name}: {e}") from None
        elif decl.default is not None:
            values[name] = str(decl.default)
        elif strict:
            raise KlcError(f"{rule.location}: hole ?{name} needs a value "
                           f"(--hole {name}=…); {_domain_words(decl)}")
    return values


def _domain_words(decl: object) -> str:
    values = getattr(decl, "values", None)
    lo, hi = getattr(decl, "lo", None), getattr(decl, "hi", None)
    if values:
        return "one of {" + ", ".join(str(v) for v in values) + "}"
    if lo is not None and hi is not None:
        return f"an integer in {lo}..{hi}"
    return f"a {getattr(decl, 'type', 'value')}"


def check_hole_names(rules: list[Rule], given: dict[str, str]) -> None:
    """Refuse a --hole that no selected rule declares (a typo must not pass silently)."""
    declared = {name for r in rules for name in r.holes}
    for name in given:
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise KlcError(f"--hole {name}: no selected rule declares a hole ?{name} "
                           f"(declared: {known})")

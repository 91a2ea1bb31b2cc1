"""Editing the launch geometry in a spec block (``scale_launch``), as rules that coarsen
threads or widen blocks do, touching only the one expression's bytes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from klc.errors import KlcError
from klc.extras import deferred
from klc.spec.doc import TOP_FIELDS, Doc, compose, expr, find_spec_block, items
from klc.spec.expr import evaluate
from klc.spec.load import load_spec
from klc.spec.model import AXES, DIMS

if TYPE_CHECKING:
    import yaml
else:
    yaml = deferred("yaml")  # (read only where a klc-spec block is)


def scale_launch(source: bytes, dim: str, axis: str, op: str, factor: int) -> bytes:
    """Scale one axis of the grid or block in the spec block, editing only that expression's
    text: ``/`` wraps it as ``ceil_div(expr, factor)`` (thread coarsening divides the grid),
    ``*`` as ``(expr) * factor``. All other bytes of the file stay as they were."""
    if dim not in DIMS or axis not in AXES or op not in ("/", "*"):
        raise KlcError(f"scale_launch: dim must be grid|block, axis x|y|z, op / or *; got "
                       f"{dim} {axis} {op}")
    if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
        raise KlcError(f"scale_launch: factor must be a positive integer, got {factor!r}")
    span = find_spec_block(source)
    if span is None:
        raise KlcError("scale_launch: the file has no klc-spec block")
    path = "<spec>"
    doc = Doc(source, path, span)
    root = compose(doc)
    f = items(doc, root, TOP_FIELDS, "klc-spec")
    if dim not in f:
        raise KlcError(f"{doc.at(root)}: klc-spec has no {dim!r} field")
    node = f[dim][1]
    entries = node.value if isinstance(node, yaml.SequenceNode) else [node]
    index = AXES.index(axis)
    if index >= len(entries) and op == "*" and isinstance(node, yaml.SequenceNode) \
            and node.flow_style and entries:
        # a missing axis is 1: multiplying it writes it (`[256]` -> `[256, 8]`, a block
        # made two-dimensional), with 1 for any axis between
        a, b = doc.byte_span(node)
        close = source.rindex(b"]", a, b)
        extra = "".join(", 1" for _ in range(len(entries), index)) + f", {factor}"
        return source[:close] + extra.encode() + source[close:]
    if index >= len(entries):
        raise KlcError(f"{doc.at(node)}: {dim} has no {axis} dimension to scale")
    target = entries[index]
    old = expr(doc, target, dim)
    new = _undo_scale(old, op, factor, source) or (
        f"ceil_div({old}, {factor})" if op == "/" else f"({old}) * {factor}")
    a, b = doc.byte_span(target)
    in_flow = isinstance(node, yaml.SequenceNode) and node.flow_style
    if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*|[0-9]+", new):
        text = new  # a bare name or number (an undone scaling gives back `ROWS`, `32`)
    elif target.style in ('"', "'"):
        q = target.style
        text = q + (new.replace("'", "''") if q == "'" else new.replace('"', '\\"')) + q
    elif in_flow and not re.fullmatch(r"[A-Za-z_0-9]+", new):
        text = f'"{new}"'  # a bare comma would split the flow list
    else:
        text = new
    out = source[:a] + text.encode() + source[b:]
    # the edit must read back as exactly the new expression
    check = Doc(out, path, find_spec_block(out))  # type: ignore[arg-type]
    f2 = items(check, compose(check), TOP_FIELDS, "klc-spec")
    n2 = f2[dim][1]
    entries2 = n2.value if isinstance(n2, yaml.SequenceNode) else [n2]
    if expr(check, entries2[index], dim) != new:
        raise KlcError(f"scale_launch: editing {dim}.{axis} did not read back as {new!r}")
    return out


def swap_launch(source: bytes, dim: str, axis: str, other: str) -> bytes:
    """Swap two axes of the grid or block in the spec block (a missing axis is 1): the
    flow list is written again with the two expressions exchanged; all other bytes of the
    file stay as they were."""
    if dim not in DIMS or axis not in AXES or other not in AXES or axis == other:
        raise KlcError(f"swap_launch: dim must be grid|block and two different axes x|y|z; got "
                       f"{dim} {axis} {other}")
    span = find_spec_block(source)
    if span is None:
        raise KlcError("swap_launch: the file has no klc-spec block")
    doc = Doc(source, "<spec>", span)
    f = items(doc, compose(doc), TOP_FIELDS, "klc-spec")
    if dim not in f:
        raise KlcError(f"{doc.at(compose(doc))}: klc-spec has no {dim!r} field")
    node = f[dim][1]
    if not (isinstance(node, yaml.SequenceNode) and node.flow_style):
        raise KlcError(f"{doc.at(node)}: {dim} is not a [x, y, z] list: cannot swap its axes")
    exprs = [expr(doc, e, dim) for e in node.value]
    i, j = AXES.index(axis), AXES.index(other)
    while len(exprs) <= max(i, j):
        exprs.append("1")
    exprs[i], exprs[j] = exprs[j], exprs[i]
    while len(exprs) > 1 and exprs[-1].strip() == "1":
        exprs.pop()
    text = "[" + ", ".join(e if re.fullmatch(r"[A-Za-z_0-9]+", e) else
                           '"' + e.replace('"', '\\"') + '"' for e in exprs) + "]"
    a, b = doc.byte_span(node)
    out = source[:a] + text.encode() + source[b:]
    check = Doc(out, "<spec>", find_spec_block(out))  # type: ignore[arg-type]
    n2 = items(check, compose(check), TOP_FIELDS, "klc-spec")[dim][1]
    if [expr(check, e, dim) for e in n2.value] != exprs:
        raise KlcError(f"swap_launch: swapping {dim}.{axis} and {dim}.{other} did not read back")
    return out


def _undo_scale(old: str, op: str, factor: int, source: bytes) -> str | None:
    """The expression before an earlier scaling that this one undoes, or None: ``(e) * k``
    divided by k is e; ``ceil_div(e, k)`` times k is e when e is a known multiple of k (a
    skill reversing a simplification gives back the spec's text as it was)."""
    pattern = rf"\((.*)\) \* {factor}" if op == "/" else rf"ceil_div\((.*), {factor}\)"
    m = re.fullmatch(pattern, old.strip(), re.S)
    if m is None or not balanced(m.group(1)):
        return None
    inner = m.group(1)
    if op == "*":
        try:
            spec = load_spec(source, "<spec>")
            value = evaluate(inner, spec.env() if spec is not None else {})
        except KlcError:
            return None
        if not isinstance(value, int) or value % factor:
            return None
    return inner


def balanced(text: str) -> bool:
    """Whether TEXT's parentheses pair up (none closes before it opens)."""
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0

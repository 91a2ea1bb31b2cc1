"""A ``rewrite launch`` edit (``grid.x *= 32``) at the kernel's launches in this file.

A rule that changes how work maps to threads changes the launch too: the kernel's text and
its launch geometry go together. The geometry lives in two places klc can see: the kernel's
klc-spec (``klc.spec.scale_launch``, what the gate runs) and its host launches
``k<<<grid, block>>>(...)`` in the same file. Both are edited. A kernel whose launch klc can
see nowhere (its callers are in other files, and it has no spec) is not rewritten: the
callers would launch the new kernel as before, and it would compute something else.

A launch argument is rewritten in place. A whole-number literal on the x axis becomes the
new number (``256`` with ``block.x /= 4`` is ``64``); any other expression is wrapped once,
evaluated once, in a lambda that changes one axis of its ``dim3``
(``[&] { dim3 klc_dims(E); klc_dims.x *= 32u; return klc_dims; }()``), which holds for an
``int`` and a ``dim3`` alike. ``/=`` rounds up, as the spec's ``ceil_div`` does."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from klc.analysis.constants import _Eval
from klc.analysis.launch import _block_dims
from klc.cuda.model import Launch as HostLaunch
from klc.cuda.model import Unit
from klc.edits.bytes import ByteEdit

if TYPE_CHECKING:
    from klc.analysis.tree import Place

# (dim, axis, op, factor): one change, as Rewrite.launch holds it
Change = tuple[str, str, str, int]
_INT = re.compile(r"\s*(\d+)[uU]?\s*")


def _describe(changes: Sequence[Change]) -> str:
    return ", ".join(f"{d}.{a} {o}= {k}" for d, a, o, k in changes)


def launches_of(unit: Unit, kernel: str) -> list[HostLaunch]:
    return [lc for lc in unit.launches if lc.kernel == kernel]


def unrecorded(unit: Unit, kernel: str, has_spec: bool, changes: str) -> str | None:
    """Why a rewrite of ``kernel`` that changes its launch (``changes``, as the rule writes
    them) may not be made here, or None: nothing in the file records the kernel's launch (no
    spec describes it, no launch of it in the file: its callers are elsewhere)."""
    if has_spec or launches_of(unit, kernel):
        return None
    return (f"its rewrite changes the launch ({changes}), but this file neither launches "
            f"`{kernel}` nor records its launch in a klc-spec: the callers elsewhere would "
            "launch the new kernel as before")


def refusal(unit: Unit, kernel: str, changes: Sequence[Change], has_spec: bool) -> str | None:
    """Why a rewrite of ``kernel`` with these launch changes may not be made here, or None:
    nothing in the file records the kernel's launch, or one of its launches gives the
    argument to change in a way klc cannot edit (too few arguments, masked text)."""
    why = unrecorded(unit, kernel, has_spec, _describe(changes))
    if why is not None:
        return why
    found = launches_of(unit, kernel)
    for lc in found:
        for dim, _axis, _op, _k in changes:
            i = 0 if dim == "grid" else 1
            if len(lc.config_spans) <= i:
                return (f"the launch of `{kernel}` at {unit.where(lc.start)} gives no {dim} "
                        "argument to change")
            start, end = lc.config_spans[i]
            for m in unit.masks:
                if m.start < end and start < m.end:
                    return (f"the {dim} of the launch of `{kernel}` at {unit.where(start)} "
                            f"is text the parser did not see as code ({m.reason})")
    return None


def scale_text(text: str, axis: str, op: str, factor: int) -> str:
    """One launch argument with one axis multiplied or divided (rounding up) by factor."""
    m = _INT.fullmatch(text)
    if m is not None and axis == "x":
        v = int(m.group(1))
        return str(v * factor if op == "*" else -(-v // factor))
    step = (f"klc_dims.{axis} *= {factor}u;" if op == "*" else
            f"klc_dims.{axis} = (klc_dims.{axis} + {factor - 1}u) / {factor}u;")
    return f"[&] {{ dim3 klc_dims({text.strip()}); {step} return klc_dims; }}()"


def host_edits(unit: Unit, kernel: str, changes: Sequence[Change]) -> list[ByteEdit]:
    """The edits that make every launch of ``kernel`` in the file take the changes, each
    argument rewritten once with all of its changes in order."""
    out = []
    for lc in launches_of(unit, kernel):
        for i, dim in enumerate(("grid", "block")):
            mine = [c for c in changes if c[0] == dim]
            if not mine or len(lc.config_spans) <= i:
                continue
            start, end = lc.config_spans[i]
            text = unit.source[start:end].decode()
            for _d, axis, op, k in mine:
                text = scale_text(text, axis, op, k)
            out.append(ByteEdit(start, end, text, "launch"))
    return out


def bounds_refusal(ctx: Place, changes: Sequence[Change]) -> str | None:
    """Why launch ``changes`` at a site of a kernel declared ``__launch_bounds__(N)`` may not
    be made, or None: the block they leave has more than N threads (the launch would fail),
    or its size or N is not known. A kernel without launch bounds is not limited here."""
    fn = ctx.function
    lb = fn.launch_bounds if fn is not None else None
    if fn is None or lb is None or not any(d == "block" for d, _, _, _ in changes):
        return None
    cap = _Eval(ctx).text(lb.max_threads)
    dims, _, how = _block_dims(ctx)
    if not isinstance(cap, int) or dims is None:
        return (f"its launch change ({_describe(changes)}) must keep the block within "
                f"`{fn.name}`'s __launch_bounds__({lb.max_threads}), and "
                + (f"the block is not known ({how})" if dims is None
                   else "that bound has no known value"))
    block = list(dims)
    for dim, axis, op, k in changes:
        if dim == "block":
            i = "xyz".index(axis)
            block[i] = block[i] * k if op == "*" else -(-block[i] // k)
    threads = block[0] * block[1] * block[2]
    if threads <= cap:
        return None
    return (f"its launch change ({_describe(changes)}) makes the block {block[0]} x {block[1]}"
            f" x {block[2]} = {threads} threads, more than `{fn.name}`'s "
            f"__launch_bounds__({lb.max_threads}) ({ctx.unit.where(lb.start)}) allows")

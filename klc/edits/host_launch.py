"""A ``rewrite launch`` edit (``grid.x *= 32``) at the kernel's launches in this file.

A rule that changes how work maps to threads changes the launch too: the kernel's text and
its launch geometry go together. The geometry lives in two places klc can see: the kernel's
klc-spec (``klc.spec.scale_launch``, what the gate runs) and its host launches
``k<<<grid, block>>>(...)`` in the same file. Both are edited. A kernel whose launch klc can
see nowhere (its callers are in other files, and it has no spec) is not rewritten: the
callers would launch the new kernel as before, and it would compute something else.

A launch argument is rewritten in its own spelling (:func:`rewrite_argument`):

- a whole number becomes the new number (``256`` with ``block.x /= 4`` is ``64``);
- a grid extent in a ceiling-division spelling keeps it, with the divisor scaled:
  ``(n + 255) / 256`` with ``grid.x /= 4`` is ``(n + 1023) / 1024``, ``CEIL_DIV(n, BLOCK)``
  is ``CEIL_DIV(n, BLOCK * 4)``, ``(n - 1) / T + 1`` is ``(n - 1) / (T * 4) + 1``
  (``ceil(ceil(n / b) / k) = ceil(n / (b k))`` for whole numbers);
- any other integer expression is multiplied or divided (``(rows) * 32``; a block extent is
  divided exactly, the rule's guards having checked it divides);
- an axis the argument did not spell is added: ``256`` with ``block.y *= 4`` is
  ``dim3(256, 4)``; a ``dim3(a, b)`` argument has its axis rewritten;
- a ``dim3`` variable declared in the launching function (``dim3 block(BS, BS);``) has its
  declaration rewritten when it is used only by launches of this kernel and never assigned
  after it; otherwise the launch reads it as ``dim3(block.x, block.y / 4, block.z)``;
- anything else (a name klc cannot see declared, a call that may return a ``dim3``) is
  wrapped once, evaluated once, in a lambda that changes one axis of its ``dim3``
  (``[&] { dim3 klc_dims(E); klc_dims.x *= 32u; return klc_dims; }()``), which holds for an
  ``int`` and a ``dim3`` alike; ``/=`` rounds up, as the spec's ``ceil_div`` does.

Every launch of the kernel in the file takes the changes, whichever function it is in."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from klc.analysis.constants import Evaluator, block_dims, dim3_declarations
from klc.cuda.model import Launch as HostLaunch
from klc.cuda.model import Unit
from klc.edits.bytes import ByteEdit

if TYPE_CHECKING:
    from klc.analysis.tree import Place

# (dim, axis, op, factor): one change, as Rewrite.launch holds it
Change = tuple[str, str, str, int]
_INT = re.compile(r"\s*(\d+)[uU]?\s*")


def describe(changes: Sequence[Change]) -> str:
    """The changes as a rule writes them: ``grid.x *= 32, block.x /= 32``."""
    return ", ".join(f"{d}.{a} <-> {d}.{'xyz'[k]}" if o == "<->" else f"{d}.{a} {o}= {k}"
                     for d, a, o, k in changes)


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
    why = unrecorded(unit, kernel, has_spec, describe(changes))
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
    """One launch argument with one axis multiplied or divided (rounding up) by factor (or,
    for ``<->``, swapped with the axis of index ``factor``)."""
    if op == "<->":
        other = "xyz"[factor]
        return (f"[&] {{ dim3 klc_dims({text.strip()}); unsigned int klc_t = klc_dims.{axis}; "
                f"klc_dims.{axis} = klc_dims.{other}; klc_dims.{other} = klc_t; "
                "return klc_dims; }()")
    m = _INT.fullmatch(text)
    if m is not None and axis == "x":
        v = int(m.group(1))
        return str(v * factor if op == "*" else -(-v // factor))
    step = (f"klc_dims.{axis} *= {factor}u;" if op == "*" else
            f"klc_dims.{axis} = (klc_dims.{axis} + {factor - 1}u) / {factor}u;")
    return f"[&] {{ dim3 klc_dims({text.strip()}); {step} return klc_dims; }}()"


def host_edits(unit: Unit, kernel: str, changes: Sequence[Change]) -> list[ByteEdit]:
    """The edits that make every launch of ``kernel`` in the file take the changes, each
    argument (or the ``dim3`` declaration it names) rewritten once with all of its changes
    in order (module doc)."""
    out: list[ByteEdit] = []
    done: set[tuple[int, int]] = set()  # dim3 declarations already rewritten
    for lc in launches_of(unit, kernel):
        for i, dim in enumerate(("grid", "block")):
            mine = [c for c in changes if c[0] == dim]
            if not mine or len(lc.config_spans) <= i:
                continue
            start, end = lc.config_spans[i]
            text = unit.source[start:end].decode()
            decl = _dim3_declaration(unit, lc, text.strip(), kernel)
            if decl is not None:
                (ds, de), axes, private = decl
                if private:
                    if (ds, de) not in done:
                        done.add((ds, de))
                        out.append(ByteEdit(ds, de, ", ".join(_scaled_axes(axes, dim, mine)),
                                            "launch"))
                    continue
                name = text.strip()
                axes = [f"{name}.{a}" for a in "xyz"]
                out.append(ByteEdit(start, end, _dim3(_scaled_axes(axes, dim, mine), 3),
                                    "launch"))
                continue
            out.append(ByteEdit(start, end, rewrite_argument(text, dim, mine), "launch"))
    return out


def bounds_refusal(ctx: Place, changes: Sequence[Change]) -> str | None:
    """Why launch ``changes`` at a site of a kernel declared ``__launch_bounds__(N)`` may not
    be made, or None: the block they leave has more than N threads (the launch would fail),
    or its size or N is not known. A kernel without launch bounds is not limited here."""
    fn = ctx.function
    lb = fn.launch_bounds if fn is not None else None
    if fn is None or lb is None or not any(d == "block" for d, _, _, _ in changes):
        return None
    cap = Evaluator(ctx).text(lb.max_threads)
    dims, _, how = block_dims(ctx)
    if not isinstance(cap, int) or dims is None:
        return (f"its launch change ({describe(changes)}) must keep the block within "
                f"`{fn.name}`'s __launch_bounds__({lb.max_threads}), and "
                + (f"the block is not known ({how})" if dims is None
                   else "that bound has no known value"))
    block = list(dims)
    for dim, axis, op, k in changes:
        if dim == "block":
            i = "xyz".index(axis)
            if op == "<->":  # the two axes change places (k: the other axis' index)
                block[i], block[k] = block[k], block[i]
            else:
                block[i] = block[i] * k if op == "*" else -(-block[i] // k)
    threads = block[0] * block[1] * block[2]
    if threads <= cap:
        return None
    return (f"its launch change ({describe(changes)}) makes the block {block[0]} x {block[1]}"
            f" x {block[2]} = {threads} threads, more than `{fn.name}`'s "
            f"__launch_bounds__({lb.max_threads}) ({ctx.unit.where(lb.start)}) allows")
def editable_spans(unit: Unit, lc: HostLaunch) -> list[tuple[int, int]]:
    """The byte spans a launch change may edit for the launch ``lc``: its grid and block
    arguments, and the arguments of the ``dim3`` declarations they name (module doc)."""
    spans = list(lc.config_spans[:2])
    for start, end in lc.config_spans[:2]:
        decl = _dim3_declaration(unit, lc, unit.source[start:end].decode().strip(), lc.kernel)
        if decl is not None:
            spans.append(decl[0])
    return spans


def rewrite_argument(text: str, dim: str, changes: Sequence[Change]) -> str:
    """One launch argument (grid or block) with the changes made, in its own spelling where
    it has one klc can read (module doc), else wrapped in a lambda."""
    core = text.strip()
    axes = _dim3_axes(core)
    if axes is not None:
        return _dim3(_scaled_axes(axes, dim, changes), len(axes))
    if not _scalar(core):
        for _d, axis, op, k in changes:
            text = scale_text(text, axis, op, k)
        return text
    new = _scaled_axes([core], dim, changes)
    return new[0] if len(new) == 1 else _dim3(new, 1)


# --------------------------------------------------------------------------------------
# Spellings


def _split_args(text: str) -> list[str]:
    """The top-level comma-separated pieces of an argument list's inside."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{<" and not (ch == "<" and depth == 0):
            depth += 1
        elif ch in ")]}" and depth:
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return out


def _closing(text: str, i: int) -> int:
    """The index of the bracket that closes the one at ``text[i]``, or -1."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack = []
    for j in range(i, len(text)):
        ch = text[j]
        if ch in pairs:
            stack.append(pairs[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
            if not stack:
                return j
    return -1


def _strip_parens(text: str) -> str:
    t = text.strip()
    while t.startswith("(") and _closing(t, 0) == len(t) - 1:
        t = t[1:-1].strip()
    return t


_DIM3 = re.compile(r"dim3\s*([({])")


def _dim3_axes(text: str) -> list[str] | None:
    """The axes of a ``dim3(a, b, c)`` (or ``dim3{...}``) argument, or None."""
    m = _DIM3.match(text)
    if m is None or _closing(text, m.start(1)) != len(text) - 1:
        return None
    inner = text[m.end(1):-1]
    axes = _split_args(inner) if inner.strip() else []
    return axes if 1 <= len(axes) <= 3 and all(axes) else None


_WORD = re.compile(r"[A-Za-z_]\w*")
_SAFE_CALL = re.compile(r"(?i)(ceil_?div|cdiv|div_?up|divup|round_?up|ceil)\w*$")


def _scalar(text: str) -> bool:
    """An integer expression klc may do arithmetic on: no bare name (it may be a ``dim3``),
    no member, no call but a ceiling division's."""
    t = _strip_parens(text)
    if not t or (_WORD.fullmatch(t) and not t.isupper()):
        return False  # a name: an int or a dim3 (an UPPER_CASE name is a constant)
    if "." in t.replace(".0", "") or "->" in t or "{" in t:
        return False
    return all(_SAFE_CALL.match(m.group(1)) for m in re.finditer(r"([A-Za-z_]\w*)\s*\(", t))


def _int(text: str) -> int | None:
    m = _INT.fullmatch(text)
    return int(m.group(1)) if m is not None else None


def _product_term(text: str) -> bool:
    """No operator binds looser than ``*`` at the top level: ``t * k`` and ``t / k`` then
    scale the whole of ``t`` (``a / b * 4`` is ``(a / b) * 4``)."""
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and ch in "+-?:<>=&|^,":
            return False
    return True


def _times(text: str, k: int) -> str:
    v = _int(text)
    if v is not None:
        return str(v * k)
    t = text.strip()
    return f"{t} * {k}" if _product_term(t) else f"({t}) * {k}"


def _exact_div(text: str, k: int) -> str:
    v = _int(text)
    if v is not None:
        return str(-(-v // k))
    t = text.strip()
    return f"{t} / {k}" if _product_term(t) else f"({t}) / {k}"


def _ceil_div(text: str, k: int) -> str:
    """A grid extent divided by k, rounding up, in the spelling it has."""
    v = _int(text)
    if v is not None:
        return str(-(-v // k))
    t = _strip_parens(text)
    m = re.fullmatch(r"([A-Za-z_]\w*)\s*\((.*)\)", t, re.S)
    if m is not None and _SAFE_CALL.match(m.group(1)) and _closing(t, t.index("(")) == len(t) - 1:
        args = _split_args(m.group(2))
        if len(args) == 2:
            return f"{m.group(1)}({args[0]}, {_times(args[1], k)})"
    m = re.fullmatch(r"\((.*)\+\s*(.+?)\s*-\s*1\s*\)\s*/\s*(.+)", t, re.S)
    if m is not None and _strip_parens(m.group(2)) == _strip_parens(m.group(3)) \
            and _closing(t, 0) == t.rindex(")", 0, m.start(3)):
        b = _strip_parens(m.group(3))
        kb = _times(b, k)
        den = kb if _int(kb) is not None else f"({kb})"
        return f"({m.group(1).strip()} + {kb} - 1) / {den}"
    m = re.fullmatch(r"\((.*)\+\s*(\d+)[uU]?\s*\)\s*/\s*(\d+)[uU]?", t, re.S)
    if m is not None and int(m.group(2)) == int(m.group(3)) - 1 \
            and _closing(t, 0) == t.rindex(")"):
        kb = int(m.group(3)) * k
        return f"({m.group(1).strip()} + {kb - 1}) / {kb}"
    m = re.fullmatch(r"\((.*)-\s*1\s*\)\s*/\s*(.+?)\s*\+\s*1", t, re.S)
    if m is not None and _closing(t, 0) == t.rindex(")", 0, m.start(2)):
        kb = _times(_strip_parens(m.group(2)), k)
        den = kb if _int(kb) is not None else f"({kb})"
        return f"({m.group(1).strip()} - 1) / {den} + 1"
    return f"({text.strip()} + {k - 1}) / {k}"


def _scaled_axes(axes: list[str], dim: str, changes: Sequence[Change]) -> list[str]:
    out = list(axes)
    for _d, axis, op, k in changes:
        i = "xyz".index(axis)
        while len(out) <= max(i, k if op == "<->" else 0):
            out.append("1")
        if op == "<->":
            out[i], out[k] = out[k], out[i]
        elif op == "*":
            out[i] = _times(out[i], k)
        elif dim == "grid":
            out[i] = _ceil_div(out[i], k)
        else:
            out[i] = _exact_div(out[i], k)
    return out


def _dim3(axes: list[str], given: int) -> str:
    """``dim3(x, y, z)`` without trailing axes of 1 beyond the ``given`` count."""
    keep = list(axes)
    while len(keep) > max(given, 1) and keep[-1].strip() == "1":
        keep.pop()
    return f"dim3({', '.join(keep)})"


def _dim3_declaration(unit: Unit, lc: HostLaunch, name: str, kernel: str
                      ) -> tuple[tuple[int, int], list[str], bool] | None:
    """For a launch argument that names a ``dim3`` declared in the launching function before
    the launch: the byte span of the declaration's arguments, its axes, and whether the
    variable is private to this kernel's launches (used by nothing else in the function and
    never assigned after its declaration, so that its declaration may change). None when the
    argument is no such name."""
    if not _WORD.fullmatch(name):
        return None
    fn = next((f for f in unit.functions if f.start <= lc.start < f.end), None)
    if fn is None:
        return None
    decls = dim3_declarations(unit, fn.start, lc.start, name)  # (``dim3 g(..), b(..);`` too)
    if not decls or decls[-1].inner is None:
        return None
    axes = list(decls[-1].extents)
    if not 1 <= len(axes) <= 3 or not all(axes):
        return None
    start, end = decls[-1].inner
    if any(mk.start < end and start < mk.end for mk in unit.masks):
        return None
    # every later use of the name in the function is a config argument of this kernel
    body = unit.source[fn.start:fn.end].decode(errors="replace")
    spans = [(s - fn.start, e - fn.start) for other in launches_of(unit, kernel)
             for s, e in other.config_spans[:2]]
    after = end - fn.start
    private = True
    for use in re.finditer(r"\b" + re.escape(name) + r"\b", body):
        pos = len(body[:use.start()].encode())
        if pos <= after:
            continue
        if not any(s <= pos < e for s, e in spans):
            private = False
            break
    return (start, end), axes, private

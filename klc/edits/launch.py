"""``rewrite launch grid.x /= 4`` (or ``*=``, by an int or an int hole): the kernel's launch
geometry changes, in its spec and at the host launch, not in the kernel's text. ``*=`` and
``/=`` are each other's inverse. ``rewrite launch grid.x <-> grid.y`` swaps two extents of
the grid (or of the block): a kernel whose rows and columns trade thread axes keeps its
coverage; the swap is its own inverse."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from klc.edits.base import InvertContext, KindEdit, PlanContext
from klc.errors import KlcError
from klc.rule import CompileContext, Edit, EditSpec, Rule
from klc.rule.registry import EditKind


@dataclass(frozen=True)
class Launch(KindEdit):
    dim: str  # "grid" | "block"
    axis: str  # "x" | "y" | "z"
    op: str  # "*" | "/" | "<->" (a swap with axis ``factor``)
    factor: int | str  # an int, or a hole "?name"; for a swap, the other axis ("y")

    kind: ClassVar[str] = "launch"
    groupable: ClassVar[bool] = True
    changes_launch: ClassVar[bool] = True

    def holes_used(self) -> set[str]:
        if self.op == "<->":
            return set()
        return {self.factor[1:]} if isinstance(self.factor, str) else set()

    def plan(self, px: PlanContext) -> None:
        if self.op == "<->":  # (dim, axis, "<->", index of the other axis)
            px.rw.launch.append((self.dim, self.axis, "<->", "xyz".index(str(self.factor))))
            return
        factor = self.factor
        if isinstance(factor, str):
            value = px.holes.get(factor.lstrip("?"))
            if value is None:
                raise KlcError(f"{px.match.rule.location}: hole {factor} has no value")
            factor = int(value)
        px.rw.launch.append((self.dim or "grid", self.axis or "x", self.op or "/",
                             int(factor or 1)))

    def invert(self, ix: InvertContext) -> Edit | None:
        if self.op == "<->":
            return self
        return Launch(self.dim, self.axis, "/" if self.op == "*" else "*", self.factor)

    def _text(self) -> str:
        if self.op == "<->":
            return f"{self.dim}.{self.axis} <-> {self.dim}.{self.factor}"
        return f"{self.dim}.{self.axis} {self.op}= {self.factor}"

    def lines(self, rule: Rule) -> list[str]:
        return [f"  rewrite launch {self._text()}"]

    def describe(self) -> list[str]:
        return [f"  launch: {self._text()}"]


def compile_launch(e: EditSpec, cx: CompileContext) -> Edit | None:
    what = f"rewrite {e.kind}"
    dim_tok, op, factor_tok = e.args
    dim, _, axis = str(dim_tok).partition(".")
    if dim not in ("grid", "block") or axis not in ("x", "y", "z"):
        cx.errs.add(e.line, e.col + len("rewrite launch "), f"{what}: {str(dim_tok)!r} is not "
                    "one of grid.x, grid.y, grid.z, block.x, block.y, block.z")
    pos = (factor_tok.line, factor_tok.column)
    if str(op) == "<->":
        other_dim, _, other = str(factor_tok).partition(".")
        if other_dim != dim or other not in ("x", "y", "z") or other == axis:
            cx.errs.add(*pos, f"{what}: a swap exchanges two axes of the same grid or block "
                        f"({dim}.{axis} <-> {dim}.y), not {str(factor_tok)!r}")
        return Launch(dim, axis, "<->", other, line=e.line, col=e.col)
    factor: int | str
    if str(factor_tok).startswith("?"):
        factor = str(factor_tok)
        cx.use_hole(factor[1:], *pos, what)
        decl = cx.holes.get(factor[1:])
        if decl is not None and decl.type != "int":
            cx.errs.add(*pos, f"the launch factor {factor} must be an int hole, "
                        f"not {decl.type}")
    else:
        factor = int(str(factor_tok))
        if factor < 1:
            cx.errs.add(*pos, f"{what}: the factor must be a positive integer, not {factor}")
    return Launch(dim, axis, str(op)[0], factor, line=e.line, col=e.col)


# the kinds this file defines (``klc.plugins`` hands them to the rule loader)
KINDS = (
    EditKind("launch", compile_launch, Launch),
)

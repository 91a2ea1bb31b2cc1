"""klc.cuda.repair: comparisons that tree-sitter-cuda reads as a template's arguments
(``curRow < h && curCol > -1``) read again as comparisons, with the file's offsets."""

from __future__ import annotations

from tree_sitter import Node

from klc.cuda.parse import parse_bytes
from klc.cuda.repair import Reread, rereadings
from klc.cuda.syntax import F_RIGHT
from klc.match.engine import _significant

COND = "curRow > -1 && curRow < h && curCol > -1 && curCol < w"


def _kernel(cond: str, before: str = "") -> bytes:
    return (f"{before}__global__ void k(float* o, int w, int h) {{\n"
            "    int curRow = blockIdx.y, curCol = threadIdx.x;\n"
            f"    if ({cond}) {{\n        o[curRow * w + curCol] = 1.0f;\n    }}\n}}\n").encode()


def _reread(src: bytes) -> dict[int, list[Node]]:
    unit = parse_bytes(src, "k.cu")
    return rereadings(unit, _significant)


def _shape(n: object, src: bytes) -> object:
    kids = n.children  # type: ignore[attr-defined]
    if not kids:
        return src[n.start_byte:n.end_byte].decode()  # type: ignore[attr-defined]
    return (n.type, *(_shape(c, src) for c in kids))  # type: ignore[attr-defined]


def test_the_misread_condition_is_four_comparisons() -> None:
    src = _kernel(COND)
    unit = parse_bytes(src, "k.cu")
    assert _has(unit.root, "template_function")  # (tree-sitter-cuda's reading)
    got = _reread(src)
    assert len(got) == 1
    (kids,) = got.values()
    cond = kids[1]
    assert isinstance(cond, Reread) and cond.type == "binary_expression"
    assert src[cond.start_byte:cond.end_byte].decode() == COND
    assert _shape(cond, src) == (
        "binary_expression",
        ("binary_expression",
         ("binary_expression",
          ("binary_expression", "curRow", ">", "-1"), "&&",
          ("binary_expression", "curRow", "<", "h")), "&&",
         ("binary_expression", "curCol", ">", "-1")), "&&",
        ("binary_expression", "curCol", "<", "w"))
    # the operands carry their field names, as the file's nodes do
    first = cond.child_by_field_name("left").child_by_field_name("left")
    assert first.child_by_field_name("operator").type == "&&"
    cmp = first.child_by_field_name("right")
    assert (cmp.child_by_field_name("left").text, cmp.child_by_field_name("right").text) == (
        b"curRow", b"h")
    assert cmp.child_by_field_id(F_RIGHT).text == b"h"  # (as the analyses ask)
    # a name read right already is the file's own node; the parent is the condition clause
    assert not isinstance(cmp.child_by_field_name("left"), Reread)
    assert cond.parent.type == "condition_clause"
    assert cond.start_point == (2, 8)


def test_a_condition_read_right_has_no_rereading() -> None:
    assert _reread(_kernel("curRow >= 0 && curRow < h && curCol >= 0 && curCol < w")) == {}


def test_a_template_of_the_file_is_not_read_again() -> None:
    before = "template <int N> __device__ int curRow(int x) { return x + N; }\n"
    src = _kernel("x < h && y > -1", before).replace(
        b"int curRow = blockIdx.y, curCol = threadIdx.x;",
        b"int x = blockIdx.y, y = threadIdx.x;").replace(
        b"o[curRow * w + curCol]", b"o[x * w + y]")
    # (x is no template: read again) ...
    assert len(_reread(src)) == 1
    # ... but where the name is a template the file declares, the template reading stands
    src = src.replace(b"x < h && y > -1", b"curRow < h && y > -1").replace(
        b"int x = blockIdx.y", b"int xx = blockIdx.y")
    assert _reread(src) == {}


def test_a_template_call_is_not_read_again() -> None:
    src = _kernel("max<int>(curRow, 0) < h")
    assert _has(parse_bytes(src, "k.cu").root, "template_function")
    assert _reread(src) == {}


def _has(n: Node, kind: str) -> bool:
    return n.type == kind or any(_has(c, kind) for c in n.children)

"""``scale_launch`` multiplying an axis the spec leaves out (it is 1): the axis is written,
with 1 for any axis between (a skill that makes a block two-dimensional:
passes/column_reduce.rule's inverses, ``block.y *= ?ty``)."""

from __future__ import annotations

import pytest

from klc.errors import KlcError
from klc.spec import load_spec
from klc.spec.launch import scale_launch

SPEC = b"""/* klc-spec
kernel: k
sizes: {n: 1024}
args:
  - {name: x, shape: [n], role: inout}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
__global__ void k(float* x, int n) {}
"""


def test_multiplying_a_missing_axis_writes_it() -> None:
    out = scale_launch(SPEC, "block", "y", "*", 8)
    assert out == SPEC.replace(b"block: [256]", b"block: [256, 8]")
    spec = load_spec(out, "k.cu")
    assert spec is not None and spec.block == ("256", "8")


def test_a_missing_axis_between_is_one() -> None:
    out = scale_launch(SPEC, "block", "z", "*", 4)
    assert out == SPEC.replace(b"block: [256]", b"block: [256, 1, 4]")


def test_dividing_a_missing_axis_is_still_refused() -> None:
    with pytest.raises(KlcError, match="block has no y dimension"):
        scale_launch(SPEC, "block", "y", "/", 8)

"""The kernel spec: how the gate launches a kernel and on what data.

A kernel file carries its spec in a leading comment block, so that one ``.cu`` file stays one
unit through batch rewriting (docs/spec.md has the whole format)::

    /* klc-spec
    kernel: saxpy
    sizes: {n: 16777216}
    args:
      - {name: a, value: 2.5}
      - {name: x, shape: [n], role: in, init: normal}
      - {name: y, shape: [n], role: inout, init: normal}
      - {name: n, value: n}
    grid: ["ceil_div(n, 256)"]
    block: [256]
    bytes: 12 * n
    flops: 2 * n
    */

Loading happens in two steps, like a compiler front end: the YAML is composed into nodes that
remember their line:column (``doc``), then validated into frozen dataclasses (``model``,
``load``), refusing unknown fields and bad values with the file:line:col of the offending
node. Everything that depends on the kernel's signature (argument types, template
parameters) is checked separately by ``check_spec`` (``check``) against the front end's
model, because a spec can be read without parsing C++. ``launch`` edits the grid and block.

Expressions (shapes, grid, block, bytes, flops, scalar values) are evaluated by ``expr``,
through the one safe evaluator (``klc.safe_eval``): numbers, names, ``+ - * / // % **``,
shifts, ``min``, ``max``, ``ceil_div``, ``abs``. Never ``eval``: a spec is input, and may come
from anyone.
"""

from klc.spec.check import MAX_BLOCK, MAX_GRID, MAX_SHARED, MAX_THREADS, Bound, BoundArg, check_spec
from klc.spec.doc import find_spec_block
from klc.spec.expr import (
    ExprError,
    Number,
    element_count,
    evaluate,
    evaluate_int,
    expr_names,
    launch_dims,
)
from klc.spec.launch import scale_launch
from klc.spec.load import MAX_SIZE, MAX_SPEC_BYTES, load_spec
from klc.spec.model import (
    AXES,
    DEFAULT_TIMEOUT_S,
    DIMS,
    INIT_KINDS,
    PEAKS,
    ROLES,
    ArgSpec,
    CType,
    Init,
    Spec,
    Tolerance,
    default_verify_sizes,
    parse_ctype,
)

__all__ = [
    "AXES", "DEFAULT_TIMEOUT_S", "DIMS", "INIT_KINDS", "MAX_BLOCK", "MAX_GRID", "MAX_SHARED",
    "MAX_SIZE", "MAX_SPEC_BYTES", "MAX_THREADS", "PEAKS", "ROLES", "ArgSpec", "Bound",
    "BoundArg", "CType", "ExprError", "Init", "Number", "Spec", "Tolerance", "check_spec",
    "default_verify_sizes", "element_count", "evaluate", "evaluate_int", "expr_names",
    "find_spec_block", "launch_dims", "load_spec", "parse_ctype", "scale_launch",
]

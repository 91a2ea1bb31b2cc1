"""Why a walk stopped: the optimization constructs left in its last version, each with the
passes that could take it apart and what became of them there.

    explain(source, rules, attempts) -> [Finding], outermost construct first

A construct is a spelling of an optimization that the passes know how to peel (a warp
shuffle, a cooperative-groups tile, a CUB block reduction, a 128-bit access, a cache hint, a
padded shared tile, a grid-stride loop, a called device function the reduction lives in,
...). For each one left in the kernel the finding says where it is, which passes take that
construct apart, and, from the walk's last round (``final_attempts``), whether one of them
matched here and was refused (with the gate's or the guard's reason), or matched nowhere
(its anchor does not read this spelling), or whether no pass takes it apart at all. The
first finding is the construct the walk stops at (``klc lineage --explain``;
bench/experts/walk.py prints it per expert).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from klc.errors import KlcError


@dataclass(frozen=True)
class Construct:
    name: str
    pattern: re.Pattern[str]
    passes: tuple[str, ...]  # the simplifications that take this construct apart
    what: str


def _c(name: str, regex: str, passes: tuple[str, ...], what: str) -> Construct:
    return Construct(name, re.compile(regex, re.M), passes, what)


_VEC = r"(?:float[24]|double2|int[24]|uint[24]|half2|__half2|__nv_bfloat162|longlong2)"
# Outermost first: the order in which a walk would meet them (passes/ORDER's groups).
CONSTRUCTS: tuple[Construct, ...] = (
    _c("launch bounds", r"__launch_bounds__\s*\(", ("remove_launch_bounds",),
       "a register-allocation hint"),
    _c("CUB block collective", r"\)\s*\.\s*(?:Reduce|Sum|InclusiveSum|ExclusiveSum|"
       r"InclusiveScan|ExclusiveScan)\s*\(", ("cub_block_sum_to_shared", "cub_block_max_to_shared",
                                              "cub_block_sum_method_to_shared"),
       "a CUB block reduction or scan"),
    _c("cooperative-groups tile", r"\.\s*(?:shfl(?:_xor|_down|_up)?|thread_rank|sync|"
       r"meta_group_rank)\s*\(|\bcg::reduce\b|\bthis_grid\s*\(\)",
       ("cg_tile_shfl_to_intrinsic", "cg_grid_rank_to_index", "cg_block_sync_to_syncthreads"),
       "a cooperative-groups tile's shuffles or rank, a block's sync() or the grid's rank"),
    _c("warp shuffle", r"__shfl_(?:xor_|down_|up_)?sync\s*\(",
       ("shuffle_block_reduce_to_shared", "unrolled_xor_sum_to_loop",
        "shfl_width_32_to_default", "warp_xor_sum_to_shared", "warp_xor_sum_up_to_shared",
        "warp_xor_sum_shift_to_shared", "warp_xor_max_to_shared",
        "warp_xor_max_temp_up_to_shared", "warp_down_sum_up_to_shared"),
       "a warp-shuffle reduction or broadcast"),
    _c("grid-stride loop", r"gridDim\.[xyz]\s*\*\s*blockDim\.[xyz]|blockDim\.[xyz]\s*\*\s*"
       r"gridDim\.[xyz]|\bCUDA_1D_KERNEL_LOOP\b|\(\s*gridDim\.[xyz]\s*\)\s*\*\s*blockDim",
       ("hoisted_grid_stride_to_inline", "grid_stride_to_one_element",
        "grid_stride_to_one_per_thread", "grid_stride_sum_to_one_element",
        "grid_stride_to_guarded_element", "grid_y_stride_to_guarded_row"),
       "many elements per thread, strided by the grid"),
    _c("block-stride loop", r"(?:\+=|=\s*\w+\s*\+)\s*(?:blockDim\.x|bdimx|loop_stride|"
       r"iteration_stride|TPB)\b", ("block_per_row_to_thread_per_row",
                                    "block_stride_to_one_thread"),
       "a row (or tile) walked by the threads of a block"),
    _c("128-bit access", r"reinterpret_cast\s*<\s*(?:const\s+)?" + _VEC + r"\b|\b" + _VEC
       + r"\s*(?:const\s*)?\*", ("devectorize_float4_loop", "devectorize_float4_store",
                                 "devectorize_float4_assign", "devectorize_float4_load",
                                 "devectorize_const_float4_alias", "devectorize_float4_alias",
                                 "devectorize_float4_deref"),
       "a vector (float4, half2, ...) load or store"),
    _c("cache hint", r"\b__(?:ldg|ldcs|ldcg|ldca|ldlu|ldcv|stcs|stcg|stwb|stwt)\s*\("
       r"|\bVLLM_LDG\b", ("remove_ldg", "remove_ldcs", "remove_stcs", "remove_load_hint_macro"),
       "a load or store with a cache operator"),
    _c("fast-math intrinsic", r"\b__(?:expf|fdividef|logf|sinf|cosf|powf|exp10f)\s*\(",
       ("fast_exp_to_precise", "fast_divide_to_precise"), "a fast approximate intrinsic"),
    _c("padded shared tile", r"__shared__[^;]*\[[^\]]*\+\s*1\s*\]|__shared__[^;]*\[\s*33\s*\]"
       r"|\[\s*32\s*\*\s*\(\s*32\s*\+\s*1\s*\)\s*\]",
       ("remove_smem_padding", "remove_smem_padding_33", "remove_flat_smem_padding"),
       "a shared tile padded against bank conflicts"),
    _c("extern shared buffer", r"\bextern\s+__shared__", (), "dynamic shared memory"),
    _c("shared-memory staging", r"__shared__", ("transpose_tile_to_direct",
                                                "smem_tiles_to_direct",
                                                "shared_tiles_to_naive_matmul",
                                                "batched_tile_transpose_to_direct"),
       "values staged in shared memory"),
    _c("thread remap", r"threadIdx\.x\s*(?:/|%|>>|&)\s*\(?\s*\w+",
       ("warp_per_row_to_thread_per_row", "warps_per_block_to_one", "index_shift_to_divide",
        "lane_mask_to_modulo"),
       "a 1-D block seen as 2-D (threadIdx.x / W, % W)"),
    _c("register array", r"^\s*(?:float|double|int|T|T2|T4|float4|scalar_t)\s+\w+\s*"
       r"\[\s*[A-Za-z_]\w*\s*\]\s*(?:;|=)", ("row_cache_to_reload", "register_block_rows_to_one",
                                            "register_block_cols_to_one"),
       "values kept in a register array sized by a constant"),
    _c("unroll pragma", r"#\s*pragma\s+unroll|_Pragma\s*\(\s*\"unroll",
       ("remove_pragma_unroll", "remove_bare_pragma_unroll"), "an unroll pragma"),
    _c("restrict qualifier", r"\b__restrict__\b", ("remove_restrict",), "a __restrict__ pointer"),
    _c("called device function", r"(?!)", (),
       "a call of a __device__ function of the file (the optimization lives in it)"),
)
STRUCTURAL_OFF = frozenset({"launch bounds", "unroll pragma", "restrict qualifier",
                            "called device function"})


@dataclass
class Finding:
    construct: str
    line: int
    col: int
    text: str
    passes: tuple[str, ...]
    verdict: str  # why no pass took it apart here

    def to_json(self) -> dict[str, Any]:
        return {"construct": self.construct, "line": self.line, "col": self.col,
                "text": self.text, "passes": list(self.passes), "verdict": self.verdict}

    def describe(self, path: str) -> str:
        return f"{path}:{self.line}:{self.col}: {self.construct} (`{self.text}`): {self.verdict}"


def _blank_comments(text: str) -> str:
    """Comments (and so the klc-spec block) as spaces, newlines kept: positions stay."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text,
                  flags=re.S)


_DEVICE_FN = re.compile(r"__device__[^;{()]*?\b([A-Za-z_]\w*)\s*(?:<[^;(){}]*>)?\s*\(", re.S)
_INNER = ("warp shuffle", "cooperative-groups tile", "CUB block collective", "128-bit access",
          "cache hint", "padded shared tile", "shared-memory staging", "fast-math intrinsic")


def _body(code: str, start: int) -> tuple[int, int] | None:
    """The span of the braced body of the definition whose parameter list opens just before
    ``start`` (None for a declaration)."""
    i = start
    depth = 1
    while i < len(code):
        ch = code[i]
        if ch == ";" and depth == 0:
            return None
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "{" and depth == 0:
            break
        i += 1
    else:
        return None
    open_at, level = i, 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            level += 1
        elif code[j] == "}":
            level -= 1
            if level == 0:
                return open_at, j + 1
    return None


def _device_calls(code: str) -> list[tuple[int, str]]:
    """(offset, name) of the calls of the file's own __device__ functions whose bodies hold
    an optimization construct (a shuffle, a tile, a vector access, ...), outside their own
    definitions: the optimization lives in the called function."""
    inner = [c.pattern for c in CONSTRUCTS if c.name in _INNER]
    names, bodies = set(), []
    for m in _DEVICE_FN.finditer(code):
        span = _body(code, m.end())
        if span is None:
            continue
        bodies.append(span)
        if any(p.search(code, span[0], span[1]) for p in inner):
            names.add(m.group(1))
    out = []
    for name in sorted(names):
        for m in re.finditer(r"\b" + re.escape(name) + r"\s*(?:<[^;(){}]*>)?\s*\(", code):
            before = code[max(0, m.start() - 200):m.start()]
            if re.search(r"__device__[^;{}]*$", before):
                continue  # the definition itself
            out.append((m.start(), name))
    return sorted(out)


_DECL = re.compile(r"\s*(?:const\s+)?[\w:<>]+(?:\s+const)?(?:\s*\*\s*|\s+)([A-Za-z_]\w*)\s*=")


def _unused_declaration(code: str, offset: int) -> bool:
    """Does the hit at ``offset`` lie in a declaration (``const float4* p4 = ...;``, ``const
    int jump = blockDim.x * gridDim.x;``) whose name nothing after it uses? (A pass that
    rewrote every use leaves it behind.)"""
    line_start = code.rfind("\n", 0, offset) + 1
    end = code.find(";", offset)
    if end < 0:
        return False
    m = _DECL.match(code, line_start)
    if m is None or m.end() > end + 1 or m.start(1) < line_start:
        return False
    return re.search(r"\b" + re.escape(m.group(1)) + r"\b", code[end:]) is None


_DEFINE = re.compile(r"[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)")


def _unused_macro(code: str, offset: int) -> bool:
    """Does the hit at ``offset`` lie in a ``#define`` whose name nothing outside its
    definitions uses? (A pass that rewrote every use of a macro leaves its definition.)"""
    line_start = code.rfind("\n", 0, offset) + 1
    m = _DEFINE.match(code, line_start)
    if m is None:
        return False
    uses = [u for u in re.finditer(r"\b" + re.escape(m.group(1)) + r"\b", code)
            if _DEFINE.match(code, code.rfind("\n", 0, u.start()) + 1) is None]
    return not uses


def _walk_made(code: str, offset: int) -> bool:
    """Is the hit on a line that declares one of the names the passes' first versions write
    (``klc_lanes``, ``klc_red``: the shared memory of a naive reduction), so not the
    expert's construct?"""
    start = code.rfind("\n", 0, offset) + 1
    end = code.find("\n", offset)
    return re.search(r"\bklc_\w+\s*\[", code[start:end if end >= 0 else len(code)]) is not None


def _pos(code: str, offset: int) -> tuple[int, int]:
    line = code.count("\n", 0, offset) + 1
    return line, offset - (code.rfind("\n", 0, offset) + 1) + 1


def explain(source: bytes, rules: Iterable[Any], attempts: Iterable[Any]) -> list[Finding]:
    """The constructs left in ``source``, outermost first (see the module doc). ``rules``
    are the walk's passes (their names), ``attempts`` its last round's refused candidates
    (``klc.lineage.Attempt`` or their JSON)."""
    code = _blank_comments(source.decode("utf-8", "replace"))
    known = {getattr(r, "name", r) for r in rules}
    tried: dict[str, list[tuple[int, str]]] = {}
    for a in attempts:
        a = a.to_json() if hasattr(a, "to_json") else a
        lines = [s.get("line", 0) for s in a.get("sites", [])] or [0]
        for ln in lines:
            tried.setdefault(a["pass"], []).append((ln, " ".join(str(a["reason"]).split())))
    findings: list[Finding] = []
    for c in CONSTRUCTS:
        hits = ([(o, n) for o, n in _device_calls(code)] if c.name == "called device function"
                else [(m.start(), m.group(0)) for m in c.pattern.finditer(code)
                      if not _unused_declaration(code, m.start())
                      and not _unused_macro(code, m.start())
                      and not _walk_made(code, m.start())])
        if not hits:
            continue
        offset, text = hits[0]
        line, col = _pos(code, offset)
        findings.append(Finding(c.name, line, col, " ".join(text.split())[:60], c.passes,
                                _verdict(c, line, known, tried)))
    return findings


def _verdict(c: Construct, line: int, known: set[str],
             tried: dict[str, list[tuple[int, str]]]) -> str:
    have = [p for p in c.passes if p in known]
    if c.name == "called device function":
        return (f"no pass takes apart {c.what}: the passes work inside it, and what is left "
                "there is listed on its own")
    if not c.passes:
        return f"no pass takes apart {c.what}"
    if not have:
        return f"no pass takes apart {c.what}" + (
            f" (none of {', '.join(c.passes)} is in the passes)" if c.passes else "")
    refused = [(p, why) for p in have for _, why in tried.get(p, [])]
    if refused:
        p, why = refused[0]
        return f"{p} matched and was refused: {why[:240]}"
    return (f"{', '.join(have)} {'does' if len(have) == 1 else 'do'} not match this spelling "
            f"of {c.what}")


def stop_construct(findings: list[Finding]) -> Finding | None:
    """The construct the walk stops at: the first finding that is not a qualifier, launch
    bound, unroll pragma or the called function a construct lives in, else the first finding."""
    return next((f for f in findings if f.construct not in STRUCTURAL_OFF),
                findings[0] if findings else None)


def explain_lineage(data: dict[str, Any], directory: Any) -> list[Finding]:
    """The findings of a recorded walk (lineage.json and its last version's file)."""
    from pathlib import Path

    last = data["versions"][-1]
    path = Path(directory) / last["file"]
    try:
        source = path.read_bytes()
    except OSError as e:
        raise KlcError(f"{path}: cannot read the walk's last version: {e.strerror or e}") \
            from None
    return explain(source, data.get("order", []),
                   [*data.get("final_attempts", []), *data.get("final_guard_refused", [])])

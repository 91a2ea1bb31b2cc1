"""The guards of strided loops in their spellings (klc/guards/strides.py), the flat padded
tile (klc/guards/padding.py) and the cache-hint macro (klc/guards/macros.py): each spelling
read, each near miss refused with its reason."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites, spec_of
from klc.rule.ruleset import load_rules_text

SPEC = """/* klc-spec
kernel: k
sizes: {n: 4096}
args:
  - {name: y, shape: [n], role: out}
  - {name: x, shape: [n], role: in}
  - {name: n, value: n}
grid: [16, 8]
block: [%s]
bytes: 8 * n
*/
"""


def probe(guard: str) -> str:
    return f"""
rule probe {{
  kind: skill
  anchor: ```
    for ($IT $I = $S; $I < $N; $I += $B) {{
        $$$BODY;
    }}
  ```
  guard: {guard}
  rewrite replace: ```
    for ($IT $I = $S; $I < $N; $I += $B) {{
        $$$BODY;
    }}
  ```
}}
"""


def verdicts(guard: str, body: str, block: str = "128", template: str = ""
             ) -> list[tuple[bool, str]]:
    spec = SPEC % block
    if template:
        spec = spec.replace("kernel: k\n", f"kernel: k\ntemplate: {{{template}}}\n")
        head = "template <int TPB>\n"
    else:
        head = ""
    code = f"{spec}{head}__global__ void k(float* y, const float* x, long long n) {{\n{body}\n}}\n"
    unit = parse_bytes(code.encode(), "k.cu")
    rules = load_rules_text(probe(guard), "t.rule")
    return [(s.ok, s.reason) for s in find_sites(unit, rules, spec=spec_of(unit))]


def test_grid_stride_spellings() -> None:
    guard = "grid_stride_start($S, x) and grid_stride_step($B, x)"
    for body in (
        "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)"
        " { y[i] = x[i]; }",
        "for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;"
        " i += static_cast<long long>(gridDim.x) * blockDim.x) { y[i] = x[i]; }",
        "const long long b = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
        "const long long s = (long long)gridDim.x * blockDim.x;\n"
        "for (long long i = b; i < n; i += s) { y[i] = x[i]; }",
    ):
        [(ok, why)] = verdicts(guard, body)
        assert ok, (body, why)


def test_grid_stride_near_misses() -> None:
    guard = "grid_stride_start($S, x) and grid_stride_step($B, x)"
    cases = {
        "for (int i = threadIdx.x; i < n; i += blockDim.x * gridDim.x) { y[i] = x[i]; }":
            "is not the thread's index in the grid along x",
        "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x)"
        " { y[i] = x[i]; }":
            "is not the grid's thread count along x",
        "long long s = gridDim.x * blockDim.x;\ns += 1;\n"
        "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += s) { y[i] = x[i]; }":
            "reassigned later",
    }
    for body, want in cases.items():
        [(ok, why)] = verdicts(guard, body)
        assert not ok and want in why, (body, why)


def test_grid_y_start_needs_a_one_thread_tall_block() -> None:
    body = "for (int r = blockIdx.y; r < n; r += gridDim.y) { y[r] = x[r]; }"
    guard = "grid_stride_start($S, y) and grid_stride_step($B, y)"
    [(ok, why)] = verdicts(guard, body, block="128")
    assert ok, why
    [(ok, why)] = verdicts(guard, body, block="64, 2")
    assert not ok and "along y" in why


def test_grid_axis_in_strides_counts_every_read() -> None:
    loop = ("for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; "
            "i += blockDim.x * gridDim.x) { y[i] = x[i]; }")
    [(ok, why)] = verdicts("grid_axis_in_strides(x)", loop)
    assert ok, why
    [(ok, why)] = verdicts("grid_axis_in_strides(x)", loop + "\nif (blockIdx.x == 0) y[0] = 1.0f;")
    assert not ok and "not as the start or step of a grid-stride" in why
    # a stride local read in the body is a read of gridDim.x
    body = ("const int s = blockDim.x * gridDim.x;\n"
            "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += s) { y[i] = s; }")
    [(ok, why)] = verdicts("grid_axis_in_strides(x)", body)
    assert not ok and "`s`, which holds" in why


def test_block_stride_spellings_and_one_thread() -> None:
    guard = "block_thread_index($S) and block_stride_step($B, x) and block_in_strides(kernel)"
    for body, template in (
        ("for (int c = threadIdx.x; c < n; c += blockDim.x) { y[c] = x[c]; }", ""),
        ("const int tid = threadIdx.x;\nconst int bdimx = blockDim.x;\n"
         "for (long long c = tid; c < n; c += bdimx) { y[c] = x[c]; }", ""),
        ("for (int c = threadIdx.x; c < n; c += TPB) { y[c] = x[c]; }", "TPB: 128"),
    ):
        [(ok, why)] = verdicts(guard, body, template=template)
        assert ok, (body, why)
    # a constant that is not the block's extent is no block stride
    [(ok, why)] = verdicts(guard, "for (int c = threadIdx.x; c < n; c += TPB) { y[c] = x[c]; }",
                           template="TPB: 64")
    assert not ok and "is not the block's extent along x" in why


def test_block_in_strides_refusals() -> None:
    loop = "for (int c = threadIdx.x; c < n; c += blockDim.x) { y[c] = x[c]; }\n"
    cases = {
        loop + "if (threadIdx.x == 0) y[0] = 0.0f;":
            "not as the start or step of a block-stride loop",
        loop + "y[blockIdx.x] += 1.0f;": "updates memory in place outside the block-stride loops",
        "for (int c = threadIdx.x; c < n; c += blockDim.x) { y[c] = x[c] + threadIdx.x; }":
            "`threadIdx.x` is read at",
        "for (int c = threadIdx.x; c < n; c += blockDim.x)"
        " { y[c] = x[c]; __syncthreads(); }":
            "reads `__syncthreads` in its body",
        "for (int c = threadIdx.x; c < n; c += blockDim.x)"
        " { if (x[c] < 0) break; y[c] = x[c]; }":
            "leaves the loop",
        loop + "float v = __shfl_xor_sync(0xffffffffu, y[0], 1);\ny[1] = v;": "a warp of one lane",
    }
    for body, want in cases.items():
        got = verdicts("block_in_strides(kernel)", body)
        assert got and all(not ok for ok, _ in got), (body, got)
        assert any(want in why for _, why in got), (body, got)


PAD = """
rule probe {
  kind: skill
  anchor: ```
    __shared__ float $T[$R * ($C + 1)];
  ```
  guard: flat_padded_tile($T, $C)
  rewrite replace: ```
    __shared__ float $T[$R * ($C + 1)];
  ```
}
"""


def pad_verdict(body: str) -> tuple[bool, str]:
    code = (f"__global__ void k(float* y, const float* x) {{\n"
            f"__shared__ float t[32 * (32 + 1)];\n{body}\n}}\n")
    [(site)] = find_sites(parse_bytes(code.encode(), "k.cu"), load_rules_text(PAD, "t.rule"))
    return site.ok, site.reason


def test_flat_padded_tile_shapes() -> None:
    for body in ("t[threadIdx.y * 33 + threadIdx.x] = x[0];",
                 "t[threadIdx.x + threadIdx.y * (32 + 1)] = x[0];",
                 "const int row = threadIdx.y * 33;\nt[row + threadIdx.x] = x[0];",
                 "t[threadIdx.y * 33 + threadIdx.x + 1] = x[0];"):
        ok, why = pad_verdict(body)
        assert ok, (body, why)
    cases = {
        "t[threadIdx.x] = x[0];": "is not a row of pitch 32 + 1",
        "t[threadIdx.y * 32 + threadIdx.x] = x[0];": "is not a row of pitch 32 + 1",
        "float* p = t;\np[0] = x[0];": "without a subscript",
        "const int row = threadIdx.y * 33;\nt[row + threadIdx.x] = x[0];\ny[0] = row;":
            "is read elsewhere",
    }
    for body, want in cases.items():
        ok, why = pad_verdict(body)
        assert not ok and want in why, (body, why)


MACRO = """
rule probe {
  kind: skill
  anchor: ```
    $M($P)
  ```
  metavar $M: identifier
  guard: load_hint_macro($M)
  rewrite replace: ```
    $M($P)
  ```
}
"""


def test_load_hint_macro_definitions() -> None:
    def verdict(defines: str) -> tuple[bool, str]:
        code = f"{defines}\n__global__ void k(float* y, const float* x) {{ y[0] = LD(x + 1); }}\n"
        [site] = find_sites(parse_bytes(code.encode(), "k.cu"), load_rules_text(MACRO, "t.rule"))
        return site.ok, site.reason

    assert verdict("#define LD(p) __ldg(p)")[0]
    assert verdict("#ifdef A\n#define LD(q) __ldcs((q))\n#else\n#define LD(q) (*(q))\n#endif")[0]
    for defines, want in (("#define LD(p) (*(p))", "plain load in every definition"),
                          ("#define LD(p) __ldg(p + 1)", "is not a load of"),
                          ("#define LD(p, q) __ldg(p)", "does not take one parameter"),
                          ("", "not a function-like macro")):
        ok, why = verdict(defines)
        assert not ok and want in why, (defines, why)

"""Generate a deterministic corpus of varied CUDA kernel files for benchmarks.

    python bench/make_corpus.py OUT_DIR [-n 1000] [--seed 0]
    python bench/make_corpus.py OUT_DIR --shipped     # the project's own kernels, round robin

Each file (1-30 KB) is assembled from kernel families written for klc (elementwise, reduction,
tiled GEMM, stencil, softmax, scan, transpose, histogram) in the styles real code is written
in: plain CUDA, CUTLASS/CuTe macros, PyTorch ATen macros, llama.cpp, gtest files, arch
``#if`` branches that split braces, host code with ``<<<>>>`` launches, files that end without
a newline. The same (n, seed) always gives the same bytes, so benchmark runs compare.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable
from pathlib import Path

DTYPES = ("float", "double", "half", "__nv_bfloat16", "int")
BLOCKS = (64, 128, 256, 512, 1024)

# How a kernel's head is written: (prefix before the return type, text between "void" and name)
HEADS: tuple[tuple[str, str], ...] = (
    ("__global__ void", ""),
    ("__global__ void", "__launch_bounds__({block})"),
    ("__global__ void", "__launch_bounds__({block}, 2)"),
    ("C10_LAUNCH_BOUNDS_1({block})\n__global__ void", ""),
    ("__global__ MY_LB({block}) void", ""),
    ('extern "C" __global__ void', ""),
    ("static __global__ void", ""),
    ("__global__ void", "__cluster_dims__(2, 1, 1)"),
    ("__global__ void", "__maxnreg__(128)"),
)
UNROLLS = ("#pragma unroll", "#pragma unroll 4", "CUTE_UNROLL", "CUTLASS_PRAGMA_UNROLL",
           "_Pragma(\"unroll\")", "")
DEVICE_SPECS = ("__device__ __forceinline__", "CUTLASS_DEVICE", "CUTE_HOST_DEVICE",
                "static __device__ __forceinline__", "__device__ inline")


class Gen:
    """One file being written: its random stream and the kernels it defines (for launches)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.kernels: list[tuple[str, str, int]] = []  # name, template args, block size
        self.count = 0

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}_{self.rng.choice(('v', 'k', 'impl', 'fwd', 'bwd'))}{self.count}"

    def head(self, name: str, block: int, template: str = "") -> str:
        prefix, mid = self.rng.choice(HEADS)
        if template and "extern" in prefix:
            prefix = "__global__ void"  # a template cannot have C linkage
        lines = f"template <{template}>\n" if template else ""
        mid = (" " + mid.format(block=block)) if mid else ""
        return f"{lines}{prefix.format(block=block)}{mid} {name}"

    def unroll(self, indent: str) -> str:
        u = self.rng.choice(UNROLLS)
        return f"{indent}{u}\n" if u else ""


def elementwise(g: Gen) -> str:
    r = g.rng
    t = r.choice(DTYPES[:4])
    block = r.choice(BLOCKS)
    name = g.name(r.choice(("relu", "gelu", "axpy", "scale", "silu", "clamp")))
    op = r.choice(("x > T(0) ? x : T(0)", "a * x + y[i]", "x * T(0.5)", "x / (T(1) + x)"))
    g.kernels.append((name, t, block))
    vec = r.random() < 0.3
    body = [
        f"{g.head(name, block, 'typename T')}(const T* __restrict__ in, T* __restrict__ y, "
        f"T a, int64_t n) {{",
        "  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;",
        "  const int64_t stride = (int64_t)blockDim.x * gridDim.x;",
        "  for (; i < n; i += stride) {",
        "    T x = in[i];",
        f"    y[i] = {op};",
        "  }",
    ]
    if vec:
        body += [
            "  if (threadIdx.x == 0 && sizeof(T) == 4) {",
            "    const float4 *v4 = reinterpret_cast<const float4 *>(in);",
            "    float4 q = v4[blockIdx.x];",
            "    (void)q;",
            "  }",
        ]
    body.append("}")
    return "\n".join(body) + "\n"


def reduction(g: Gen) -> str:
    r = g.rng
    t = r.choice(("float", "double", "int"))
    block = r.choice(BLOCKS[1:])
    name = g.name(r.choice(("block_sum", "row_max", "norm2", "dot")))
    g.kernels.append((name, t, block))
    shfl = r.choice(("__shfl_down_sync(0xffffffff, v, o)", "__shfl_xor_sync(0xffffffffu, v, o)",
                     "WARP_SHFL_DOWN(v, o)"))
    return (
        f"{g.head(name, block, 'typename T, int kBlock')}(const T *__restrict__ x, "
        "T *__restrict__ out, int n) {\n"
        "  __shared__ T warp_sums[kBlock / 32];\n"
        "  T v = T(0);\n"
        "  for (int i = blockIdx.x * kBlock + threadIdx.x; i < n; i += kBlock * gridDim.x)\n"
        "    v += x[i];\n"
        f"{g.unroll('  ')}"
        "  for (int o = 16; o > 0; o >>= 1)\n"
        f"    v += {shfl};\n"
        "  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;\n"
        "  __syncthreads();\n"
        "  if (threadIdx.x < 32) {\n"
        "    v = threadIdx.x < kBlock / 32 ? warp_sums[threadIdx.x] : T(0);\n"
        "    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);\n"
        "    if (threadIdx.x == 0) atomicAdd(out, v);\n"
        "  }\n"
        "}\n"
    )


def gemm(g: Gen) -> str:
    r = g.rng
    tile = r.choice((8, 16, 32))
    block = tile * tile
    name = g.name(r.choice(("sgemm", "hgemm_tile", "matmul", "gemm_nt")))
    g.kernels.append((name, "float", block))
    pad = r.choice(("", " + 1", " + 8"))
    k_loop = (
        "  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {\n"
        "    As[threadIdx.y][threadIdx.x] = (row < M && t * TILE + threadIdx.x < K) ? "
        "A[row * K + t * TILE + threadIdx.x] : 0.f;\n"
        "    Bs[threadIdx.y][threadIdx.x] = (col < N && t * TILE + threadIdx.y < K) ? "
        "B[(t * TILE + threadIdx.y) * N + col] : 0.f;\n"
        "    __syncthreads();\n"
        f"{g.unroll('    ')}"
        "    for (int k = 0; k < TILE; ++k)\n"
        "      acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];\n"
        "    __syncthreads();\n"
        "  }\n"
    )
    if r.random() < 0.25:  # an arch branch that splits the loop's braces
        k_loop = (
            "#if __CUDA_ARCH__ >= 800\n"
            "  for (int t = 0; t < (K + TILE - 1) / TILE; t++) {\n"
            "#else\n"
            "  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {\n"
            "#endif\n"
            "    As[threadIdx.y][threadIdx.x] = A[row * K + t * TILE + threadIdx.x];\n"
            "    Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * N + col];\n"
            "    __syncthreads();\n"
            "    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];\n"
            "    __syncthreads();\n"
            "  }\n"
        )
    return (
        f"{g.head(name, block, f'int TILE = {tile}')}(const float *__restrict__ A, "
        "const float *__restrict__ B,\n"
        "    float *__restrict__ C, int M, int N, int K, float alpha, float beta) {\n"
        f"  __shared__ float As[TILE][TILE{pad}];\n"
        f"  __shared__ float Bs[TILE][TILE{pad}];\n"
        "  int row = blockIdx.y * TILE + threadIdx.y;\n"
        "  int col = blockIdx.x * TILE + threadIdx.x;\n"
        "  float acc = 0.f;\n"
        f"{k_loop}"
        "  if (row < M && col < N) C[row * N + col] = alpha * acc + beta * C[row * N + col];\n"
        "}\n"
    )


def stencil(g: Gen) -> str:
    r = g.rng
    radius = r.choice((1, 2, 4))
    name = g.name(r.choice(("stencil", "laplace", "blur", "jacobi")))
    g.kernels.append((name, "float", 256))
    taps = " + ".join(f"c[{k}] * (s[tx - {k}] + s[tx + {k}])" for k in range(1, radius + 1))
    return (
        f"{g.head(name, 256)}(const float *__restrict__ in, float *__restrict__ out, "
        "const float *__restrict__ c, int n) {\n"
        f"  __shared__ float s[256 + 2 * {radius}];\n"
        f"  int g = blockIdx.x * blockDim.x + threadIdx.x, tx = threadIdx.x + {radius};\n"
        "  s[tx] = g < n ? in[g] : 0.f;\n"
        f"  if (threadIdx.x < {radius}) {{\n"
        f"    s[threadIdx.x] = g >= {radius} ? in[g - {radius}] : 0.f;\n"
        f"    s[tx + blockDim.x] = g + blockDim.x < n ? in[g + blockDim.x] : 0.f;\n"
        "  }\n"
        "  __syncthreads();\n"
        f"  if (g < n) out[g] = c[0] * s[tx] + {taps};\n"
        "}\n"
    )


def softmax(g: Gen) -> str:
    r = g.rng
    name = g.name(r.choice(("softmax", "log_softmax", "attn_row")))
    block = r.choice((128, 256, 512))
    g.kernels.append((name, "float", block))
    return (
        f"{g.head(name, block)}(float *out, const float *in, int cols) {{\n"
        "  extern __shared__ float smem[];\n"
        "  const float *row = in + (size_t)blockIdx.x * cols;\n"
        "  float m = -INFINITY;\n"
        "  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);\n"
        "  smem[threadIdx.x] = m;\n"
        "  __syncthreads();\n"
        "  for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n"
        "    if (threadIdx.x < s) smem[threadIdx.x] = fmaxf(smem[threadIdx.x], "
        "smem[threadIdx.x + s]);\n"
        "    __syncthreads();\n"
        "  }\n"
        "  m = smem[0];\n"
        "  float sum = 0.f;\n"
        "  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += __expf(row[c] - m);\n"
        "  sum = block_reduce_sum(sum);\n"
        "  for (int c = threadIdx.x; c < cols; c += blockDim.x)\n"
        "    out[(size_t)blockIdx.x * cols + c] = __expf(row[c] - m) / sum;\n"
        "}\n"
    )


def transpose(g: Gen) -> str:
    r = g.rng
    name = g.name("transpose")
    g.kernels.append((name, "float", 256))
    return (
        f"{g.head(name, 256)}(float *odata, const float *idata, int width, int height) {{\n"
        f"  __shared__ float tile[32][32{r.choice(('', ' + 1'))}];\n"
        "  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;\n"
        f"{g.unroll('  ')}"
        "  for (int j = 0; j < 32; j += 8)\n"
        "    if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = "
        "idata[(y + j) * width + x];\n"
        "  __syncthreads();\n"
        "  x = blockIdx.y * 32 + threadIdx.x;\n"
        "  y = blockIdx.x * 32 + threadIdx.y;\n"
        "  for (int j = 0; j < 32; j += 8)\n"
        "    if (x < height && y + j < width) odata[(y + j) * height + x] = "
        "tile[threadIdx.x][threadIdx.y + j];\n"
        "}\n"
    )


def histogram(g: Gen) -> str:
    r = g.rng
    bins = r.choice((64, 128, 256))
    name = g.name("histogram")
    g.kernels.append((name, "int", 256))
    return (
        f"{g.head(name, 256)}(const unsigned char *__restrict__ data, "
        "unsigned int *__restrict__ hist, size_t n) {\n"
        f"  __shared__ unsigned int local[{bins}];\n"
        f"  for (int b = threadIdx.x; b < {bins}; b += blockDim.x) local[b] = 0;\n"
        "  __syncthreads();\n"
        "  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; "
        "i += (size_t)blockDim.x * gridDim.x)\n"
        f"    atomicAdd(&local[data[i] % {bins}], 1u);\n"
        "  __syncthreads();\n"
        f"  for (int b = threadIdx.x; b < {bins}; b += blockDim.x) "
        "atomicAdd(&hist[b], local[b]);\n"
        "}\n"
    )


def scan(g: Gen) -> str:
    name = g.name("scan")
    g.kernels.append((name, "int", 1024))
    return (
        f"{g.head(name, 1024)}(const int *in, int *out, int n) {{\n"
        "  __shared__ int temp[2048];\n"
        "  int tid = threadIdx.x, offset = 1;\n"
        "  temp[2 * tid] = 2 * tid < n ? in[2 * tid] : 0;\n"
        "  temp[2 * tid + 1] = 2 * tid + 1 < n ? in[2 * tid + 1] : 0;\n"
        "  for (int d = n >> 1; d > 0; d >>= 1) {\n"
        "    __syncthreads();\n"
        "    if (tid < d) {\n"
        "      int ai = offset * (2 * tid + 1) - 1, bi = offset * (2 * tid + 2) - 1;\n"
        "      temp[bi] += temp[ai];\n"
        "    }\n"
        "    offset *= 2;\n"
        "  }\n"
        "  if (tid == 0) temp[n - 1] = 0;\n"
        "  __syncthreads();\n"
        "  if (2 * tid < n) out[2 * tid] = temp[2 * tid];\n"
        "}\n"
    )


def quant_llama(g: Gen) -> str:
    name = g.name("dequantize_q4")
    g.kernels.append((name, "half", 256))
    return (
        f"static __global__ void {name}(const void * __restrict__ vx, half2 * __restrict__ y, "
        "const int64_t k) {\n"
        "    const int64_t i = (int64_t)blockDim.x*blockIdx.x + threadIdx.x;\n"
        "    if (i >= k) {\n"
        "        return;\n"
        "    }\n"
        "    const uint8_t * q = (const uint8_t *) vx;\n"
        "    int sumi = 0;\n"
        "#pragma unroll\n"
        "    for (int j = 0; j < 4; ++j) {\n"
        "        sumi = __dp4a((int) q[4*i + j], 0x01010101, sumi);\n"
        "    }\n"
        "    y[i] = __floats2half2_rn((float) (sumi & 0xF), (float) (sumi >> 4));\n"
        "    GGML_UNUSED(k);\n"
        "}\n"
    )


FAMILIES: tuple[Callable[[Gen], str], ...] = (
    elementwise, reduction, gemm, stencil, softmax, transpose, histogram, scan, quant_llama,
)

PRELUDES = (
    "#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n",
    "#pragma once\n#include \"cutlass/cutlass.h\"\n#include <cute/tensor.hpp>\n",
    "#include <ATen/ATen.h>\n#include <ATen/cuda/CUDAContext.h>\n#include <c10/macros/Macros.h>\n",
    "#include \"common.cuh\"\n#include \"ggml.h\"\n",
    "#include <gtest/gtest.h>\n#include <cuda_runtime.h>\n",
)


def helper(g: Gen) -> str:
    r = g.rng
    spec = r.choice(DEVICE_SPECS)
    sep = "\n" if spec.isupper() and r.random() < 0.5 else " "
    name = g.name("warp_reduce")
    return (
        f"template <typename T>\n{spec}{sep}T {name}(T v) {{\n"
        f"{g.unroll('  ')}"
        "  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);\n"
        "  return v;\n"
        "}\n"
    )


def host_code(g: Gen, style: int) -> str:
    r = g.rng
    lines = []
    for name, t, block in g.kernels:
        tt = "float" if t in ("half", "__nv_bfloat16") else t
        if r.random() < 0.5:
            lines.append(f"  {name}<{tt}><<<(n + {block - 1}) / {block}, {block}, 0, "
                         "stream>>>(args...);")
        else:
            lines.append(f"  {name}<<<dim3((n + {block - 1}) / {block}), dim3({block})>>>"
                         "(args...);")
    body = "\n".join(lines)
    if style == 4:  # gtest
        return (f"TEST(Kernels, {r.choice(('128x128', '64x64x32', 'Basic'))}) {{\n"
                f"  int n = 1 << 16;\n  cudaStream_t stream = 0;\n{body}\n"
                "  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);\n}\n")
    if style == 2:  # ATen dispatch
        return ("void launch_all(const at::Tensor& self, int64_t n) {\n"
                "  TORCH_CHECK(self.is_cuda(), \"expected a CUDA tensor\");\n"
                "  auto stream = at::cuda::getCurrentCUDAStream();\n"
                "  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), \"launch_all\", [&] {\n"
                f"{body}\n"
                "    C10_CUDA_KERNEL_LAUNCH_CHECK();\n"
                "  });\n}\n")
    return (f"template <typename... Args>\nvoid launch_all(int n, cudaStream_t stream, "
            f"Args... args) {{\n{body}\n}}\n")


def make_file(index: int, seed: int) -> bytes:
    """One file: deterministic in (index, seed), between 1 and 30 KB."""
    rng = random.Random(f"klc-corpus:{seed}:{index}")
    g = Gen(rng)
    style = rng.randrange(len(PRELUDES))
    target = rng.randint(1024, 30 * 1024)
    parts = [f"// generated by bench/make_corpus.py (seed {seed}, file {index})\n",
             PRELUDES[style], "#define MY_LB(n) __launch_bounds__(n)\n\n"]
    if rng.random() < 0.3:
        parts.append("namespace kernels {\n\n")
        closing = "\n}  // namespace kernels\n"
    else:
        closing = ""
    size = sum(map(len, parts))
    # stop early enough that the launches written after the kernels still fit the target
    while not g.kernels or size + 120 * len(g.kernels) + 1600 < target:
        chunk = helper(g) if rng.random() < 0.2 else rng.choice(FAMILIES)(g)
        if rng.random() < 0.1:
            chunk = f"REGISTER_KERNEL_FAMILY({g.count}, \"family\")\n" + chunk
        parts.append(chunk + "\n")
        size += len(chunk) + 1
    parts.append(closing)
    parts.append(host_code(g, style))
    text = "".join(parts)
    if rng.random() < 0.1:
        text = text.rstrip("\n")  # a last line without a newline
    return text.encode()


def corpus_how(corpus: Path) -> str:
    """How a corpus was made (the CORPUS file ``main`` writes), or its path: the
    benchmarks' headers."""
    try:
        return (corpus / "CORPUS").read_text().strip()
    except OSError:
        return f"{corpus} (not made by bench/make_corpus.py)"


def shipped_kernels() -> list[Path]:
    """The kernel files the project ships (the lineages' expert and walked versions, the
    held-out set, the examples), in a fixed order: real kernels, each with its klc-spec."""
    bench = Path(__file__).resolve().parent
    return sorted(p for p in bench.rglob("*.cu") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", metavar="OUT_DIR")
    ap.add_argument("-n", type=int, default=1000, help="number of files (default 1000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shipped", action="store_true",
                    help="copy the project's own kernel files (bench/**/*.cu: lineage versions, "
                    "held-out set, examples) round robin instead of generating files")
    args = ap.parse_args(argv)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # how the corpus was made, for the benchmarks' headers (not a .cu file: never listed)
    how = f"python bench/make_corpus.py {out} -n {args.n}" + (
        " --shipped" if args.shipped else f" --seed {args.seed}")
    (out / "CORPUS").write_text(how + "\n")
    total = 0
    if args.shipped:
        kernels = shipped_kernels()
        for i in range(args.n):
            src = kernels[i % len(kernels)]
            data = src.read_bytes()
            (out / f"k{i:05d}_{src.parent.name}_{src.name}").write_bytes(data)
            total += len(data)
        print(f"wrote {args.n} files ({len(kernels)} kernels shipped in bench/, round robin), "
              f"{total / 1e6:.2f} MB, to {out}")
        return 0
    for i in range(args.n):
        data = make_file(i, args.seed)
        suffix = ".cuh" if i % 7 == 3 else ".cu"
        (out / f"gen_{i:05d}{suffix}").write_bytes(data)
        total += len(data)
    print(f"wrote {args.n} files, {total / 1e6:.2f} MB, to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

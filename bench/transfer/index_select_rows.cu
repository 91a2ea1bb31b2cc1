/* klc-spec
kernel: index_select_rows
sizes: {n_idx: 32768, n_src: 65536, width: 1024}
verify_sizes:
  - {n_idx: 256, n_src: 300, width: 256}
  - {n_idx: 77, n_src: 13, width: 101}
  - {n_idx: 1, n_src: 2, width: 3}
args:
  - {name: out, shape: [n_idx, width], role: out}
  - {name: src, shape: [n_src, width], role: in, init: normal}
  - {name: idx, shape: [n_idx], role: in, init: "randint(0, n_src)"}
  - {name: n_idx, value: n_idx}
  - {name: width, value: width}
grid: ["ceil_div(width, 32)", "ceil_div(n_idx, 8)"]
block: [32, 8]
bytes: 4 * n_idx * width + 8 * n_idx + 4 * width * min(n_src, n_idx) // 2
flops: 0
*/
// family: gather
// style: 2D grid (x over columns, y over selected rows), int64 indices (long), size_t offsets
// Row gather (index_select along dim 0): out[i, :] = src[idx[i], :], idx in [0, n_src).
// bytes: out written, idx read (8 bytes each), and the src rows used (at least half of
// min(n_src, n_idx) distinct rows for random indices, counted as half). flops: none.
__global__ void index_select_rows(float* out, const float* src, const long* idx, int n_idx,
                                  int width) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n_idx && col < width) {
        size_t r = (size_t)idx[i];
        out[(size_t)i * width + col] = src[r * width + col];
    }
}

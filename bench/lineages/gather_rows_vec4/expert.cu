/* klc-spec
kernel: gather_rows_vec4
sizes: {n_idx: 32768, n_src: 65536, width: 1024}
verify_sizes:
  - {n_idx: 256, n_src: 300, width: 256}
  - {n_idx: 77, n_src: 13, width: 101}
  - {n_idx: 5, n_src: 9, width: 6}
  - {n_idx: 1, n_src: 2, width: 3}
args:
  - {name: out, shape: [n_idx, width], role: out}
  - {name: src, shape: [n_src, width], role: in, init: normal}
  - {name: idx, shape: [n_idx], role: in, init: "randint(0, n_src)"}
  - {name: n_idx, value: n_idx}
  - {name: width, value: width}
grid: ["ceil_div(width, 256)", "ceil_div(n_idx, 8)"]
block: [32, 8]
bytes: 4 * n_idx * width + 8 * n_idx + 4 * width * min(n_src, n_idx) // 2
flops: 0
*/
// Row gather: out[i, :] = src[idx[i], :] for i < n_idx, row-major float rows of `width`
// elements. The expert of the gather_rows_vec4 lineage: a 2-D launch (x over columns, y
// over the selected rows) whose every thread copies two groups of four consecutive columns
// of its row (16 bytes of floats each), a block's width of groups apart (each warp access
// stays contiguous):
//   - one 128-bit access for each group (a uint4 load and store: the bytes as they are)
//     where both addresses are 16-byte aligned and the four columns are in the row (every
//     row of a width that is a multiple of 4, from aligned buffers); elsewhere (a ragged row
//     end, a width whose rows start unaligned) the four columns one by one, each checked
//     against the width;
//   - an eighth of the threads along x (the grid's x extent counts columns / 256): two
//     independent 16-byte loads in flight per thread.
// The alignment test is on the addresses themselves, so any width and any buffer work.
__global__ void gather_rows_vec4(float* out, const float* src, const long* idx, int n_idx,
                                 int width) {
    int col0 = (blockIdx.x * blockDim.x * 2 + threadIdx.x) * 4;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    #pragma unroll
    for (int v = 0; v < 2; ++v) {
        int col = col0 + v * blockDim.x * 4;
        if (i < n_idx && col < width) {
            size_t r = (size_t)idx[i];
            if (col + 4 <= width
                && ((reinterpret_cast<unsigned long long>(&out[(size_t)i * width + col])
                     | reinterpret_cast<unsigned long long>(&src[r * width + col])) & 15) == 0) {
                *reinterpret_cast<uint4*>(&out[(size_t)i * width + col]) =
                    *reinterpret_cast<const uint4*>(&src[r * width + col]);
            } else {
                for (int k = 0; k < 4 && col + k < width; ++k) {
                    out[(size_t)i * width + col + k] = src[r * width + col + k];
                }
            }
        }
    }
}

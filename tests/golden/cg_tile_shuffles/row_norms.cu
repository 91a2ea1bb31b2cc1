/* klc-spec
kernel: row_norms
sizes: {rows: 4096, cols: 1024}
args:
  - {name: out, shape: [rows], role: out}
  - {name: x, shape: [rows, cols], role: in}
  - {name: cols, value: cols}
grid: [rows]
block: [32]
bytes: 4 * rows * cols
*/
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// A warp per row: the squares summed by a butterfly, the total broadcast from lane 0.
__global__ void row_norms(float* out, const float* x, int cols) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float s = 0.0f;
    for (int c = threadIdx.x % 32; c < cols; c += 32) {
        const float v = x[blockIdx.x * cols + c];
        s += v * v;
    }
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, o);
    }
    s = __shfl_sync(0xffffffffu, s, 0);
    if (threadIdx.x % 32 == 0) {
        out[blockIdx.x] = sqrtf(s);
    }
}

/* klc-spec
kernel: row_dot
sizes: {rows: 4096, cols: 512}
args:
  - {name: a, shape: [rows, cols], role: in}
  - {name: b, shape: [rows, cols], role: in}
  - {name: out, shape: [rows], role: out}
  - {name: cols, value: cols}
grid: [rows]
block: [32]
*/
// One warp per row: a dot product summed through a 32-thread tile's shuffles.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define WARP 32

__global__ void row_dot(const float* a, const float* b, float* out, int cols) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<WARP> tile = cg::tiled_partition<WARP>(block);
    float s = 0.0f;
    for (int c = (threadIdx.x % 32); c < cols; c += WARP) {
        s += a[blockIdx.x * cols + c] * b[blockIdx.x * cols + c];
    }
    for (int o = WARP / 2; o > 0; o /= 2) {
        s += __shfl_down_sync(0xffffffffu, s, o);
    }
    s = __shfl_sync(0xffffffffu, s, 0);
    if ((threadIdx.x % 32) == 0) {
        out[blockIdx.x] = s;
    }
}

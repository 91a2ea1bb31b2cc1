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
    for (int c = tile.thread_rank(); c < cols; c += WARP) {
        s += a[blockIdx.x * cols + c] * b[blockIdx.x * cols + c];
    }
    for (int o = WARP / 2; o > 0; o /= 2) {
        s += tile.shfl_down(s, o);
    }
    s = tile.shfl(s, 0);
    if (tile.thread_rank() == 0) {
        out[blockIdx.x] = s;
    }
}

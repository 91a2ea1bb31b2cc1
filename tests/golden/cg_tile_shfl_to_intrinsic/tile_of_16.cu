// A 16-thread tile's shuffles are not the full-mask warp shuffles: no rewrite.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define HALF 16

__global__ void half_sums(const float* x, float* y) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<HALF> tile = cg::tiled_partition<HALF>(block);
    float v = x[blockIdx.x * blockDim.x + threadIdx.x];
    for (int o = 1; o < HALF; o *= 2) v += tile.shfl_xor(v, o);
    y[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

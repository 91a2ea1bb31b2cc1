// A warp sum through cooperative groups' reduce (CUDA 13's cg pulls in libcu++'s cuda/std).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void row_sum_cg(const float* __restrict__ x, float* __restrict__ out, int cols) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const float* row = x + (size_t)blockIdx.x * cols;
    float acc = 0.0f;
    for (int c = warp.thread_rank(); c < cols; c += warp.size()) acc += row[c];
    acc = cg::reduce(warp, acc, cg::plus<float>());
    if (warp.thread_rank() == 0) out[blockIdx.x] = acc;
}

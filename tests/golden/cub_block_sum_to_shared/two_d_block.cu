/* klc-spec
kernel: tile_sum
sizes: {n: 4096}
args:
  - {name: x, shape: [n, 256], role: in}
  - {name: y, shape: [n], role: out}
grid: [n]
block: [16, 16]
*/
// A 16 x 16 block: thread (x, y) is not slot threadIdx.x. No rewrite.
#include <cub/block/block_reduce.cuh>
#include <cuda/std/functional>
using CubAddOp = cuda::std::plus<>;

__global__ void tile_sum(const float* x, float* y) {
    using BlockReduce = cub::BlockReduce<float, 16, cub::BLOCK_REDUCE_WARP_REDUCTIONS, 16>;
    __shared__ typename BlockReduce::TempStorage temp;
    float v = x[blockIdx.x * 256 + threadIdx.y * 16 + threadIdx.x];
    const float s = BlockReduce(temp).Reduce(v, CubAddOp());
    if (threadIdx.x == 0 && threadIdx.y == 0) y[blockIdx.x] = s;
}

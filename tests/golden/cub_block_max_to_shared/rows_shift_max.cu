/* klc-spec
kernel: row_norm
template: {TPB: 256}
sizes: {rows: 4096, cols: 1024}
args:
  - {name: x, shape: [rows, cols], role: in}
  - {name: y, shape: [rows, cols], role: out}
  - {name: cols, value: cols}
grid: [rows]
block: [256]
*/
// Each row shifted by its maximum, the maximum taken with CUB's block reduction.
#include <cub/block/block_reduce.cuh>
#include <cuda/std/functional>
using CubMaxOp = cuda::maximum<>;

template <int TPB>
__global__ void row_norm(const float* x, float* y, int cols) {
    using BlockReduce = cub::BlockReduce<float, TPB>;
    __shared__ typename BlockReduce::TempStorage temp;
    __shared__ float total;
    float part = 0.0f;
    for (int c = threadIdx.x; c < cols; c += TPB) part += x[blockIdx.x * cols + c];
    const float s = BlockReduce(temp).Reduce(part, CubMaxOp());
    if (threadIdx.x == 0) total = s;
    __syncthreads();
    for (int c = threadIdx.x; c < cols; c += TPB) y[blockIdx.x * cols + c] = x[blockIdx.x * cols + c] - total;
}

/* klc-spec
kernel: row_total
sizes: {rows: 2048, cols: 1000}
args:
  - {name: out, shape: [rows], role: out}
  - {name: x, shape: [rows, cols], role: in}
  - {name: cols, value: cols}
grid: [rows]
block: [128]
bytes: 4 * rows * cols
*/
#include <cub/cub.cuh>
// A block-wide sum through CUB, made for the block's 128 threads.
__global__ void row_total(float* out, const float* x, int cols) {
    typedef cub::BlockReduce<float, 128> Reduce;
    __shared__ typename Reduce::TempStorage tmp;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        s += x[blockIdx.x * cols + c];
    }
    const float total = Reduce(tmp).Sum(s);
    out[blockIdx.x] = total;
}

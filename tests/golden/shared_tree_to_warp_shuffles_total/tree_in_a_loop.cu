/* klc-spec
kernel: row_totals
sizes: {rows: 4096, cols: 256}
args:
  - {name: x, shape: ["rows * cols"], role: in, init: "uniform(0, 1)"}
  - {name: totals, shape: [rows], role: out}
  - {name: rows, value: rows}
grid: [64]
block: [256]
*/
// Near miss: the tree runs in a loop over rows; its next row would overwrite the warp sums
// while warp 0 may still read them.
__global__ void row_totals(const float* x, float* totals, int rows) {
    __shared__ float sdata[256];
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        sdata[threadIdx.x] = x[r * 256 + threadIdx.x];
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) {
                sdata[threadIdx.x] += sdata[threadIdx.x + s];
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) totals[r] = sdata[0];
        __syncthreads();
    }
}

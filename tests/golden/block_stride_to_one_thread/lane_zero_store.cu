/* klc-spec
kernel: row_copy_count
sizes: {rows: 2048, cols: 1000}
args:
  - {name: y, shape: [rows, cols], role: out}
  - {name: x, shape: [rows, cols], role: in}
  - {name: done, shape: [rows], role: out}
  - {name: cols, value: cols}
grid: [rows]
block: [256]
bytes: 8 * rows * cols
*/
// Thread 0 of each block marks its row: the block's threads matter outside the loop.
__global__ void row_copy_count(float* y, const float* x, int* done, int cols) {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        y[blockIdx.x * cols + c] = x[blockIdx.x * cols + c];
    }
    if (threadIdx.x == 0) {
        done[blockIdx.x] = 1;
    }
}

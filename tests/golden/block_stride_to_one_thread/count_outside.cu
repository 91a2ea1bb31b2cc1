/* klc-spec
kernel: rows_visited
sizes: {rows: 2048, cols: 1000}
args:
  - {name: y, shape: [rows, cols], role: out}
  - {name: visits, shape: [1], role: out}
  - {name: cols, value: cols}
grid: [rows]
block: [256]
bytes: 4 * rows * cols
*/
// Every thread counts itself once: the count is the block's size, which one thread is not.
__global__ void rows_visited(float* y, int* visits, int cols) {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        y[blockIdx.x * cols + c] = 0.5f;
    }
    atomicAdd(visits, 1);
}

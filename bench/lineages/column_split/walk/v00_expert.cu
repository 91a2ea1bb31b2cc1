/* klc-spec
kernel: column_accumulate
sizes: {rows: 32768, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 1024}
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 5}
args:
  - {name: x, shape: [rows, cols], role: in, init: normal}
  - {name: acc, shape: [cols], role: inout, init: "normal(0, 0.1)"}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)", 8]
block: [32, 32]
bytes: 4 * rows * cols + 8 * cols
flops: rows * cols
tolerance: {rtol: 0.0002, atol: 0.00001}
timeout_s: 120
*/
// Add each column's sum of a row-major rows x cols matrix to an accumulator:
// acc[c] += sum over r of x[r, c] (a bias or a norm's shift gradient accumulated over
// micro-batches). The expert of the column_split lineage; each optimization is one code
// shape (README.md names the pass that removes it):
//   - a row split over the grid's y axis: with cols / 32 blocks along x only 64 SMs of an
//     H200's 132 would run, so 8 blocks along y share each column's rows, block row b
//     taking the row slices b * 32 + threadIdx.y, 256 rows apart; each block's slice-0
//     thread adds the block's partial sum to acc[c] with one atomicAdd (8 per column);
//   - a 32 x 32 block per 32 columns: threadIdx.x picks the column (a warp reads 32
//     consecutive floats of one row: coalesced), threadIdx.y a slice of the block's rows;
//     the 32 partial sums meet in shared memory after one barrier and the slice-0 thread
//     adds them in slice order.
// The accumulator starts at zero in every thread and acc is read nowhere else, so the
// sum of the 8 atomic adds is the column's sum, reassociated (within the tolerance; the
// order of the atomics varies from run to run).
// bytes: x read once, acc read and written. flops: one add per element.
__global__ void column_accumulate(float* x, float* acc, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    __shared__ decltype(sum) part[1024];
    if (c < cols) {
        for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < rows; r += blockDim.y * gridDim.y) {
            sum += x[(size_t)r * cols + c];
        }
    }
    part[threadIdx.y * blockDim.x + threadIdx.x] = sum;
    __syncthreads();
    if (c < cols && threadIdx.y == 0) {
        for (int k = 1; k < blockDim.y; k++) {
            sum += part[k * blockDim.x + threadIdx.x];
        }
        atomicAdd(&acc[c], sum);
    }
}

/* klc-spec
kernel: affine_grads_accumulate
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 256, cols: 768}
  - {rows: 301, cols: 999}
  - {rows: 3, cols: 5}
args:
  - {name: dy, shape: [rows, cols], role: in, init: normal}
  - {name: x, shape: [rows, cols], role: in, init: "normal(0.5, 2)"}
  - {name: center, shape: [rows], role: in, init: "normal(0.5, 0.1)"}
  - {name: dscale, shape: [cols], role: inout, init: "normal(0, 0.1)"}
  - {name: dshift, shape: [cols], role: inout, init: "normal(0, 0.1)"}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)", 8]
block: [32, 32]
bytes: 8 * rows * cols + 4 * rows + 16 * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0002, atol: 0.00001}
timeout_s: 120
*/
// Parameter gradients of a per-feature affine map of row-centred inputs, accumulated over
// micro-batches (row-major rows x cols):
//   dscale[c] += sum_r dy[r, c] * (x[r, c] - center[r]),  dshift[c] += sum_r dy[r, c]
// (the shape of a layer norm's weight and bias gradients). The expert of the column_split2
// lineage; each optimization is one code shape (README.md names the pass that removes it):
//   - a row split over the grid's y axis: with cols / 32 blocks along x only 64 SMs of an
//     H200's 132 would run, so 8 blocks along y share each column's rows (block row b
//     taking the row slices b * 32 + threadIdx.y, 256 rows apart); each block's slice-0
//     thread adds the block's two partial sums to dscale[c] and dshift[c] with one
//     atomicAdd each;
//   - a 32 x 32 block per 32 columns, both partial sums met in shared memory after one
//     barrier; then every thread but the slice-0 thread of an in-range column leaves (the
//     early-return spelling) and that one adds the partial sums in slice order.
// Both sums start at zero in every thread and the outputs are read nowhere else, so the
// 8 atomic adds of each column add its two sums, reassociated (within the tolerance).
// bytes: dy and x read once, center read, dscale and dshift read and written. flops: 4 per
// element.
__global__ void affine_grads_accumulate(float* dy, float* x, float* center, float* dscale,
                                        float* dshift, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    float ds = 0.0f;
    float db = 0.0f;
    __shared__ decltype(ds) part_ds[1024];
    __shared__ decltype(db) part_db[1024];
    if (c < cols) {
        for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < rows; r += blockDim.y * gridDim.y) {
            float g = dy[(size_t)r * cols + c];
            float xc = x[(size_t)r * cols + c] - center[r];
            ds += g * xc;
            db += g;
        }
    }
    part_ds[threadIdx.y * blockDim.x + threadIdx.x] = ds;
    part_db[threadIdx.y * blockDim.x + threadIdx.x] = db;
    __syncthreads();
    if (c >= cols || threadIdx.y != 0) return;
    for (int k = 1; k < blockDim.y; k++) {
        ds += part_ds[k * blockDim.x + threadIdx.x];
        db += part_db[k * blockDim.x + threadIdx.x];
    }
    atomicAdd(&dscale[c], ds);
    atomicAdd(&dshift[c], db);
}

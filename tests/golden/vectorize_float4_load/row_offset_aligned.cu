/* klc-spec
kernel: row_copy4_aligned
sizes: {rows: 4096, cols: 4096}
verify_sizes:
  - {rows: 64, cols: 1024}
  - {rows: 37, cols: 1000}
args:
  - {name: x, shape: [rows, cols], role: in}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: [rows]
block: [256]
*/
// Row r starts at x + r * cols: every size the spec gives cols (4096, 1024, 1000) is a
// multiple of 4, so each row pointer is 16-byte aligned and the float4 load is sound.
__global__ void row_copy4_aligned(const float* __restrict__ x, float* __restrict__ y, int rows,
                                  int cols) {
    const int r = blockIdx.x;
    const float* xr = x + (size_t)r * cols;
    for (int i = threadIdx.x; i < cols / 4; i += blockDim.x) {
        float4 v = make_float4(xr[4 * (i) + 0], xr[4 * (i) + 1], xr[4 * (i) + 2], xr[4 * (i) + 3]);
        y[(size_t)r * cols + 4 * i] = v.x + v.y + v.z + v.w;
    }
}

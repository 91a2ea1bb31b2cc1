/* klc-spec
kernel: scaled_rows
sizes: {rows: 8192, cols: 4096}
verify_sizes:
  - {rows: 37, cols: 700}
args:
  - {name: y, shape: [rows, cols], role: out}
  - {name: x, shape: [rows, cols], role: in}
  - {name: scale, shape: [rows], role: in}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 256)", "rows"]
block: [256]
bytes: 8 * rows * cols + 4 * rows
*/
// Each row scaled by its factor: a row of blocks per row (block one thread tall), the
// columns split over x; the launch puts the rows on grid.y through a dim3.
__global__ void scaled_rows(float* y, const float* x, const float* scale, int rows,
                            int cols) {
    {
        int row = blockIdx.y;
        if (row < rows) {
            const float s = scale[row];
            int c = blockIdx.x * blockDim.x + threadIdx.x;
            if (c < cols) {
                y[(long long)row * cols + c] = s * x[(long long)row * cols + c];
            }
        }
    }
}

void scaled_rows_launch(float* y, const float* x, const float* scale, int rows, int cols) {
    dim3 grid((cols + 255) / 256, rows);
    scaled_rows<<<grid, 256>>>(y, x, scale, rows, cols);
}

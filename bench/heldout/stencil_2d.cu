/* klc-spec
kernel: stencil_2d
sizes: {rows: 8192, cols: 8192}
verify_sizes:
  - {rows: 64, cols: 1024}
  - {rows: 131, cols: 1001}
  - {rows: 3, cols: 5}
args:
  - {name: u, shape: [rows, cols], role: in, init: normal}
  - {name: u_next, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 32)", "ceil_div(rows, 8)"]
block: [32, 8]
bytes: 8 * rows * cols
flops: 4 * rows * cols
*/
// One Jacobi step of the 5-point Laplace stencil on a row-major rows x cols grid:
//   u_next[r, c] = 0.25 * (u[r - 1, c] + u[r + 1, c] + u[r, c - 1] + u[r, c + 1])
// for interior points; boundary points (first and last row and column) are copied from u.
// One point per thread, 32 x 8 threads per block.
// bytes: u read once (4 * rows * cols; neighbours shared between threads come from cache),
// u_next written once (4 * rows * cols). flops: 3 adds and a multiply per (interior) point.
__global__ void stencil_2d(const float* u, float* u_next, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        int i = r * cols + c;
        if (r == 0 || r == rows - 1 || c == 0 || c == cols - 1) {
            u_next[i] = u[i];
        } else {
            u_next[i] = 0.25f * (u[i - cols] + u[i + cols] + u[i - 1] + u[i + 1]);
        }
    }
}

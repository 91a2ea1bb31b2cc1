/* klc-spec
kernel: shift_rows
template: {TPB: 128}
sizes: {rows: 2048, cols: 1000}
args:
  - {name: y, shape: [rows, cols], role: out}
  - {name: x, shape: [rows, cols], role: in}
  - {name: bias, shape: [rows], role: in}
  - {name: cols, value: cols}
grid: [rows]
block: ["ceil_div(128, 128)"]
bytes: 8 * rows * cols
*/
// Each row shifted by its bias: the block's threads stride the row by the template
// constant the block is launched with, and a local holds blockDim.x for the second sweep.
template <int TPB>
__global__ void shift_rows(float* y, const float* x, const float* bias, int cols) {
    const int row = blockIdx.x;
    const float b = bias[row];
    for (int c = 0; c < cols; c++) {
        y[row * cols + c] = x[row * cols + c] + b;
    }
    const int bdimx = blockDim.x;
    for (int c = 0; c < cols; c++) {
        y[row * cols + c] = fmaxf(y[row * cols + c], 0.0f);
    }
}

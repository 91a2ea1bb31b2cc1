/* klc-spec
kernel: flagged_scale
sizes: {rows: 512, cols: 16384}
verify_sizes:
  - {rows: 37, cols: 99}
  - {rows: 1, cols: 3}
args:
  - {name: vals, shape: [rows, cols], role: inout, init: normal}
  - {name: flags, shape: [rows, cols], role: in, init: "randint(0, 2)"}
  - {name: factors, shape: [rows], role: in, init: "uniform(0.5, 2)"}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows, 128)"]
block: [128]
bytes: 12 * rows * cols
flops: rows * cols
timeout_s: 60
*/
// A row's flagged entries scaled in place by the row's factor, the element's position in a
// 64-bit local of the loop body that both the read and the store use.
__global__ void flagged_scale(float* vals, const int* flags, const float* factors, int rows,
                              int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float f = factors[r];
        for (int c = 0; c < cols; ++c) {
            const long long at = (long long)r * cols + c;
            if (flags[at] != 0) {
                float v = vals[at];
                vals[at] = v > 0.0f ? v * f : v / f;
            }
        }
    }
}

/* klc-spec
kernel: group_sums
sizes: {rows: 4096, n: 256, m: 8}
verify_sizes:
  - {rows: 64, n: 37, m: 3}
  - {rows: 3, n: 2, m: 1}
args:
  - {name: a, shape: [rows, n, m], role: in, init: normal}
  - {name: y, shape: [rows, n], role: inout, init: normal}
  - {name: rows, value: rows}
  - {name: n, value: n}
  - {name: m, value: m}
grid: ["(ceil_div(rows, 128)) * 32"]
block: [128]
bytes: 4 * rows * n * m + 8 * rows * n
flops: rows * n * m
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// y[r, c] += the sum of a group of m inputs: a sum loop nested in an element-wise loop that
// updates y in place. The outer loop is the one strided (each lane owns its y[r, c]); the
// inner sum stays whole in its lane. Striding the inner one instead would leave the outer
// loop, and its in-place update, to all 32 lanes.
__global__ void group_sums(const float* a, float* y, int rows, int n, int m) {
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (r < rows) {
        for (int c = lane; c < n; c += 32) {
            float s = 0.0f;
            for (int j = 0; j < m; j++) {
                s += a[((size_t)r * n + c) * m + j];
            }
            y[(size_t)r * n + c] += s;
        }
    }
}

/* klc-spec
kernel: bias_gelu
sizes: {rows: 16384, cols: 4096}
verify_sizes:
  - {rows: 64, cols: 1024}
  - {rows: 77, cols: 1001}
  - {rows: 2, cols: 5}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(0, 2)"}
  - {name: bias, shape: [cols], role: in, init: normal}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(rows * cols, 256)"]
block: [256]
bytes: 8 * rows * cols + 4 * cols
flops: 5 * rows * cols
*/
// family: elementwise
// style: __device__ helper, M_SQRT1_2, erff, bias indexed with %, inputs first
// Fused bias add and exact (erf) GELU: y[r, c] = gelu(x[r, c] + bias[c]),
// gelu(v) = 0.5 v (1 + erf(v / sqrt(2))).
// bytes: x read and y written once (8 rows cols), bias read once (4 cols). flops: 5 per
// element (erff not counted).
__device__ float gelu_erf(float v) {
    return 0.5f * v * (1.0f + erff(v * (float)M_SQRT1_2));
}

__global__ void bias_gelu(const float *x, const float *bias, float *y, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        int c = i % cols;
        y[i] = gelu_erf(x[i] + bias[c]);
    }
}

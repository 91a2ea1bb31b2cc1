/* klc-spec
kernel: linear_bias_wide
sizes: {B: 16, IN: 8192, OUT: 256}
verify_sizes:
  - {B: 2, IN: 999, OUT: 33}
  - {B: 1, IN: 1, OUT: 3}
args:
  - {name: y, shape: [B, OUT], role: out}
  - {name: x, shape: [B, IN], role: in, init: normal}
  - {name: W, shape: [OUT, IN], role: in, init: "normal(0, 0.02)"}
  - {name: bias, shape: [OUT], role: in, init: normal}
  - {name: B, value: B}
  - {name: IN, value: IN}
  - {name: OUT, value: OUT}
grid: ["ceil_div(B * OUT, 256)"]
block: [256]
bytes: 4 * B * IN + 4 * OUT * IN + 4 * OUT + 4 * B * OUT
flops: 2 * B * OUT * IN
tolerance: {rtol: 0.0005, atol: 0.00001}
timeout_s: 120
*/
// A linear layer with a wide input, one thread per output: the sum starts at the bias;
// the output's coordinates are declared between the index and the check; `T* x` spelling.
__global__ void linear_bias_wide(float* y, const float* x, const float* W, const float* bias,
                                 int B, int IN, int OUT) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = t / OUT;
    const int o = t % OUT;
    if (t < B * OUT) {
        float acc = bias[o];
        for (int k = 0; k < IN; k++) {
            acc += x[b * IN + k] * W[o * IN + k];
        }
        y[t] = acc;
    }
}

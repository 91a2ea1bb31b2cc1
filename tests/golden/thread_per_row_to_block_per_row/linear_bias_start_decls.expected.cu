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
grid: ["B * OUT"]
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
    const int t = blockIdx.x;
    const int b = t / OUT;
    const int o = t % OUT;
    if (t < B * OUT) {
        float acc = bias[o];
        {
            decltype(acc) partial = 0;
            for (int k = threadIdx.x; k < IN; k += blockDim.x) {
                partial += x[b * IN + k] * W[o * IN + k];
            }
            for (int offset = 16; offset > 0; offset >>= 1) {
                partial += __shfl_xor_sync(0xffffffffu, partial, offset);
            }
            __shared__ decltype(acc) partials[32];
            if (threadIdx.x % 32 == 0) {
                partials[threadIdx.x / 32] = partial;
            }
            __syncthreads();
            partial = partials[0];
            for (int warp = 1; warp < blockDim.x / 32; warp++) {
                partial += partials[warp];
            }
            __syncthreads();
            acc += partial;
        }
        y[t] = acc;
    }
}

/* klc-spec
kernel: dense_bias
sizes: {N: 2048, OUT: 1024, IN_F: 512}
verify_sizes:
  - {N: 64, OUT: 96, IN_F: 512}
  - {N: 7, OUT: 33, IN_F: 512}
  - {N: 1, OUT: 3, IN_F: 512}
args:
  - {name: out, shape: [N, OUT], role: out}
  - {name: in, shape: [N, IN_F], role: in, init: normal}
  - {name: W, shape: [OUT, IN_F], role: in, init: "normal(0, 0.05)"}
  - {name: bias, shape: [OUT], role: in, init: normal}
  - {name: N, value: N}
  - {name: OUT, value: OUT}
grid: ["(ceil_div(N * OUT, 128)) * 32"]
block: [128]
bytes: 4 * N * IN_F + 4 * OUT * IN_F + 4 * OUT + 4 * N * OUT
flops: 2 * N * OUT * IN_F
tolerance: {rtol: 0.0005, atol: 0.00001}
timeout_s: 120
*/
// A dense layer, one thread per output: the sum starts at the bias (not at 0), the input
// width is a #define, the threads past the end leave at once, the loop body is unbraced.
#define IN_F 512
__global__ void dense_bias(float *out, const float *in, const float *W, const float *bias,
                           int N, int OUT) {
    const int idx = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (idx < N * OUT) {
        int n = idx / OUT;
        int j = idx % OUT;
        float acc = bias[j];
        {
            decltype(acc) partial = 0;
            for (int k = lane; k < IN_F; k += 32) {
                partial += in[n * IN_F + k] * W[j * IN_F + k];
            }
            for (int offset = 16; offset > 0; offset >>= 1) {
                partial += __shfl_xor_sync(0xffffffffu, partial, offset);
            }
            acc += partial;
        }
        out[idx] = acc;
    }
}

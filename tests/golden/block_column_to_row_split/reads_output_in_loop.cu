/* klc-spec
kernel: bias_grad
sizes: {B: 16384, C: 4096}
verify_sizes:
  - {B: 301, C: 999}
  - {B: 3, C: 5}
args:
  - {name: dbias, shape: [C], role: inout, init: "normal(0, 0.1)"}
  - {name: grad, shape: [B, C], role: in, init: normal}
  - {name: B, value: B}
  - {name: C, value: C}
grid: ["ceil_div(C, 32)"]
block: [32, 32]
bytes: 4 * B * C + 8 * C
flops: B * C
tolerance: {rtol: 0.0002, atol: 0.00001}
*/
// Bias gradient accumulated over micro-batches: a 32 x 32 block per 32 channels, the rows
// strided over threadIdx.y, partial sums met in shared memory, 64-bit row offsets, the output read in the loop.
__global__ void bias_grad(float *dbias, const float *__restrict__ grad, int B, int C) {
    int ch = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.f;
    __shared__ decltype(acc) partial[1024];
    if (ch < C) {
        for (long row = threadIdx.y; row < B; row += blockDim.y) {
            const float *g = grad + row * C;
            acc += g[ch] * dbias[ch];
        }
    }
    partial[threadIdx.y * blockDim.x + threadIdx.x] = acc;
    __syncthreads();
    if (ch < C && threadIdx.y == 0) {
        for (int s = 1; s < blockDim.y; s++) {
            acc += partial[s * blockDim.x + threadIdx.x];
        }
        dbias[ch] += acc;
    }
}

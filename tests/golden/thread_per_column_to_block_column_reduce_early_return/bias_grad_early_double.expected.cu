/* klc-spec
kernel: bias_grad
sizes: {B: 8, T: 4096, OC: 768}
verify_sizes:
  - {B: 2, T: 150, OC: 999}
  - {B: 1, T: 3, OC: 5}
args:
  - {name: dbias, shape: [OC], role: out}
  - {name: dout, shape: [B, T, OC], role: in, init: normal}
  - {name: B, value: B}
  - {name: T, value: T}
  - {name: OC, value: OC}
grid: ["(ceil_div(OC, 64)) * 2"]
block: ["ceil_div(64, 2)", 32]
bytes: 4 * B * T * OC + 4 * OC
flops: B * T * OC
tolerance: {rtol: 0.0002, atol: 0.00001}
*/
// Bias gradient over a (B, T, OC) activation: an early return, the row count computed
// after it, a double accumulator, 64-bit row index, T* x spacing.
__global__ void bias_grad(float* dbias, const float* dout, int B, int T, int OC) {
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    const long BT = (long)B * T;
    double sum = 0.0;
    __shared__ decltype(sum) part[1024];
    if (o < OC) {
        for (long bt = threadIdx.y; bt < BT; bt += blockDim.y) {
            sum += dout[bt * OC + o];
        }
    }
    part[threadIdx.y * blockDim.x + threadIdx.x] = sum;
    __syncthreads();
    if (o >= OC || threadIdx.y != 0) return;
    for (int k = 1; k < blockDim.y; k++) {
        sum += part[k * blockDim.x + threadIdx.x];
    }
    dbias[o] = (float)sum;
}

/* klc-spec
kernel: sumsq_blocks
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: partial, shape: ["ceil_div(n, 128)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 128)"]
block: [128]
bytes: 4 * n
flops: 2 * n
*/
// A float local for a double slot would round every square: refused.
__global__ void sumsq_blocks(const float* x, double* partial, int n) {
    __shared__ double acc[128];
    int t = threadIdx.x;
    int i = blockIdx.x * 128 + t;
    acc[t] = i < n ? (double)x[i] * x[i] : 0.0;
    __syncthreads();
    for (int s = 64; s > 0; s >>= 1) {
        if (t < s) acc[t] += acc[t + s];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = acc[0];
}

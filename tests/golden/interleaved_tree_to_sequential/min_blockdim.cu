/* klc-spec
kernel: block_min
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: out, shape: ["ceil_div(n, 128)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 128)"]
block: [128]
bytes: 4 * n
flops: n
*/
// A per-block minimum with the textbook interleaved tree, its bound blockDim.x and the level's
// statement unbraced: sequential addressing keeps the same minimum.
__global__ void block_min(const float* x, float* out, int n) {
    __shared__ float sm[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    sm[t] = i < n ? x[i] : INFINITY;
    __syncthreads();
    for (int s = 1; s < blockDim.x; s *= 2) {
        if (t % (2 * s) == 0) sm[t] = fminf(sm[t], sm[t + s]);
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = sm[0];
}

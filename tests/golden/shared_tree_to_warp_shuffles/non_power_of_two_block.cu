/* klc-spec
kernel: odd_partials
sizes: {n: 65536}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: partial, shape: ["ceil_div(n, 192)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 192)"]
block: [192]
*/
// Near miss: 192 threads; the halving tree over blockDim.x is not a whole tree (and the
// shuffle form would add another number of values).
__global__ void odd_partials(const float* x, float* partial, int n) {
    __shared__ float s[192];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) {
            s[threadIdx.x] += s[threadIdx.x + k];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
    }
}

/* klc-spec
kernel: row_partials
sizes: {n: 65536}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: partial, shape: ["ceil_div(n, 128)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 128)"]
block: [64, 2]
*/
// Near miss: a 64 x 2 block; both rows of threads run the tree over one array of 64 slots.
__global__ void row_partials(const float* x, float* partial, int n) {
    __shared__ float s[64];
    int i = blockIdx.x * 128 + threadIdx.y * 64 + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 64 / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) {
            s[threadIdx.x] += s[threadIdx.x + k];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
    }
}

/* klc-spec
kernel: sumsq_partials
template: {BLOCK_SIZE: 1024}
sizes: {n: 1048576}
verify_sizes:
  - {n: 5000}
args:
  - {name: x, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: partial, shape: ["ceil_div(n, BLOCK_SIZE)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK_SIZE)"]
block: [BLOCK_SIZE]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// A squared norm's first stage on blocks of 1024 threads: the value squared as it is staged.
template <int BLOCK_SIZE>
__global__ void sumsq_partials(const float* x, float* partial, int n) {
    __shared__ float s[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK_SIZE + tid;
    float v = i < n ? x[i] : 0.0f;
    float sum = v * v;
    for (unsigned int k = 16; k > 0; k >>= 1) {
        sum += __shfl_down_sync(0xffffffff, sum, k);
    }
    if (tid % 32 == 0) {
        s[tid / 32] = sum;
    }
    __syncthreads();
    if (tid < 32) {
        sum = tid < BLOCK_SIZE / 32 ? s[tid] : 0.0f;
        for (unsigned int k = 16; k > 0; k >>= 1) {
            sum += __shfl_down_sync(0xffffffff, sum, k);
        }
    }
    if (tid == 0) {
        partial[blockIdx.x] = sum;
    }
}

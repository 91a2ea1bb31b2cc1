/* klc-spec
kernel: sum_blocks
sizes: {n: 1048576}
verify_sizes:
  - {n: 1000}
args:
  - {name: x, shape: [n], role: in, init: "uniform(-1, 1)"}
  - {name: partial, shape: ["ceil_div(n, 128)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 128)"]
block: [128]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// The tree over blockDim.x (128 threads, from the spec's block), threadIdx.x written out.
__global__ void sum_blocks(const float* x, float* partial, int n) {
    __shared__ float sdata[1024];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = (i < n) ? x[i] : 0.0f;
    for (unsigned int s = 16; s > 0; s >>= 1) {
        sum += __shfl_down_sync(0xffffffff, sum, s);
    }
    if (threadIdx.x % 32 == 0) {
        sdata[threadIdx.x / 32] = sum;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        sum = threadIdx.x < blockDim.x / 32 ? sdata[threadIdx.x] : 0.0f;
        for (unsigned int s = 16; s > 0; s >>= 1) {
            sum += __shfl_down_sync(0xffffffff, sum, s);
        }
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = sum;
    }
}

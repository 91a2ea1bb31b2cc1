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
    sdata[threadIdx.x] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sdata[threadIdx.x] += sdata[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}

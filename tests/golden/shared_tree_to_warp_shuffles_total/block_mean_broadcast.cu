/* klc-spec
kernel: subtract_block_mean
sizes: {n: 1048576}
verify_sizes:
  - {n: 1000003}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: y, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 512)"]
block: [512]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// Every thread of the block reads the tree's total from sdata[0] (blockDim.x = 512 from the
// spec's block, threadIdx.x written out, an int loop variable).
__global__ void subtract_block_mean(const float* x, float* y, int n) {
    __shared__ float sdata[512];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[threadIdx.x] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sdata[threadIdx.x] += sdata[threadIdx.x + s];
        }
        __syncthreads();
    }
    float mean = sdata[0] / blockDim.x;
    if (i < n) {
        y[i] = x[i] - mean;
    }
}

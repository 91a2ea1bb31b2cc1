/* klc-spec
kernel: reduce_sequential
template: {BLOCK_SIZE: 256}
sizes: {n: 1048576}
verify_sizes:
  - {n: 1000003}
  - {n: 37}
args:
  - {name: g_idata, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: g_odata, shape: ["ceil_div(n, BLOCK_SIZE)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK_SIZE)"]
block: [BLOCK_SIZE]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// The teaching series' second reduction: one element per thread staged in a templated
// shared array, the tree with sequential addressing, thread 0 writing the block's partial.
template <unsigned int BLOCK_SIZE>
__global__ void reduce_sequential(const float* g_idata, float* g_odata, unsigned int n) {
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    float sum = (i < n) ? g_idata[i] : 0;
    for (unsigned int s = 16; s > 0; s >>= 1) {
        sum += __shfl_down_sync(0xffffffff, sum, s);
    }
    if (tid % 32 == 0) {
        sdata[tid / 32] = sum;
    }
    __syncthreads();
    if (tid < 32) {
        sum = tid < BLOCK_SIZE / 32 ? sdata[tid] : 0.0f;
        for (unsigned int s = 16; s > 0; s >>= 1) {
            sum += __shfl_down_sync(0xffffffff, sum, s);
        }
    }
    if (tid == 0) {
        g_odata[blockIdx.x] = sum;
    }
}

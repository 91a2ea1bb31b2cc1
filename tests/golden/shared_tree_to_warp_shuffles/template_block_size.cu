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
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

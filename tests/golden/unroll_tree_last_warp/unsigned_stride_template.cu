/* klc-spec
kernel: reduce3
template: {blockSize: 512}
sizes: {n: 4194304}
args:
  - {name: g_idata, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: g_odata, shape: ["ceil_div(n, blockSize)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, blockSize)"]
block: [blockSize]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// The textbook sequential-addressing tree: unsigned tid and stride, the stride loop from
// blockDim.x, a templated block size, unsigned n.
template <unsigned int blockSize>
__global__ void reduce3(const float *g_idata, float *g_odata, unsigned int n) {
    __shared__ float sdata[blockSize];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

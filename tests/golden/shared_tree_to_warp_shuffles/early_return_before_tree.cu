/* klc-spec
kernel: tail_partials
template: {BLOCK_SIZE: 256}
sizes: {n: 65536}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: partial, shape: ["ceil_div(n, BLOCK_SIZE)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK_SIZE)"]
block: [BLOCK_SIZE]
*/
// Near miss: the threads past n return before the tree (a bug the block barriers hide, the
// full-mask shuffles would not).
template <unsigned int BLOCK_SIZE>
__global__ void tail_partials(const float* x, float* partial, unsigned int n) {
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK_SIZE + tid;
    if (i >= n) return;
    sdata[tid] = x[i];
    __syncthreads();
    for (unsigned int s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}

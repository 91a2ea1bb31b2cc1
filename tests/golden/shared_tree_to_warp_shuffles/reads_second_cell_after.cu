/* klc-spec
kernel: partials_and_pair
template: {BLOCK_SIZE: 256}
sizes: {n: 65536}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: partial, shape: ["ceil_div(n, BLOCK_SIZE)"], role: out}
  - {name: pair, shape: ["ceil_div(n, BLOCK_SIZE)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK_SIZE)"]
block: [BLOCK_SIZE]
*/
// Near miss: code after the tree reads sdata[1] (the tree's partial sum of the odd slots'
// first pair level), which the shuffle form never computes.
template <unsigned int BLOCK_SIZE>
__global__ void partials_and_pair(const float* x, float* partial, float* pair, unsigned int n) {
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK_SIZE + tid;
    sdata[tid] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
    if (tid == 1) pair[blockIdx.x] = sdata[1];
}

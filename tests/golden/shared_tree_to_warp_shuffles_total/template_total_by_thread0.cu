/* klc-spec
kernel: block_totals
template: {BLOCK_SIZE: 128}
sizes: {n: 1048576}
verify_sizes:
  - {n: 4099}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: partial, shape: ["ceil_div(n, BLOCK_SIZE)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK_SIZE)"]
block: [BLOCK_SIZE]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// The textbook partial sum (sequential addressing): thread 0 stores sdata[0].
template <unsigned int BLOCK_SIZE>
__global__ void block_totals(const float* x, float* partial, unsigned int n) {
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
}

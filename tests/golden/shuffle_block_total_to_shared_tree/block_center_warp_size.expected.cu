/* klc-spec
kernel: block_center_shuffle
template: {BLOCK_SIZE: 256}
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: y, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK_SIZE)"]
block: [BLOCK_SIZE]
bytes: 8 * n
flops: 3 * n
tolerance: {rtol: 0.0001, atol: 0.00001}
*/
// Block-local centering by warp shuffles spelled with warpSize and an unsigned full mask;
// thread 0 leaves the total in sdata[0] for the whole block.
template <unsigned int BLOCK_SIZE>
__global__ void block_center_shuffle(const float* x, float* y, unsigned int n) {
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    sdata[tid] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (int offset = BLOCK_SIZE / 2; offset > 0; offset >>= 1) {
        if (tid < offset) {
            sdata[tid] += sdata[tid + offset];
        }
        __syncthreads();
    }
    float mean = sdata[0] / BLOCK_SIZE;
    if (i < n) {
        y[i] = x[i] - mean;
    }
}

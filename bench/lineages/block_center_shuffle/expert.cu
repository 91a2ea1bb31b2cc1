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
// Block-local centering: y[i] = x[i] - the mean of block b's BLOCK_SIZE elements (the last
// block pads with zeros and still divides by BLOCK_SIZE), one element per thread. The expert
// of the block_center_shuffle lineage; one optimization, one code shape (README.md names the
// pass that removes it):
//   - the block's sum by warp shuffles: each warp adds its 32 values in registers
//     (__shfl_down_sync at offsets 16 .. 1), lane 0 of every warp parks the warp's sum in
//     shared memory, one barrier, warp 0 adds the BLOCK_SIZE / 32 warp sums the same way,
//     thread 0 leaves the total in sdata[0] and a second barrier shows it to the block;
//     where the shared-memory tree stages every value in sdata and runs log2(BLOCK_SIZE)
//     levels, each with a block barrier.
// bytes: x read once (the second read hits the cache), y written. flops: an add per element
// for the sum, a subtraction and the mean's division.
template <unsigned int BLOCK_SIZE>
__global__ void block_center_shuffle(const float* x, float* y, unsigned int n) {
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    float sum = (i < n) ? x[i] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_down_sync(0xffffffff, sum, offset);
    }
    if (tid % 32 == 0) {
        sdata[tid / 32] = sum;
    }
    __syncthreads();
    if (tid < 32) {
        sum = tid < BLOCK_SIZE / 32 ? sdata[tid] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) {
            sum += __shfl_down_sync(0xffffffff, sum, offset);
        }
    }
    if (tid == 0) {
        sdata[0] = sum;
    }
    __syncthreads();
    float mean = sdata[0] / BLOCK_SIZE;
    if (i < n) {
        y[i] = x[i] - mean;
    }
}

/* klc-spec
kernel: block_sum_loads_tree
template: {BLOCK_SIZE: 256, LOADS: 4}
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 4099}
  - {n: 37}
args:
  - {name: g_idata, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: g_odata, shape: ["ceil_div(n, BLOCK_SIZE)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK_SIZE)"]
block: ["BLOCK_SIZE / LOADS"]
bytes: 4 * n + 4 * ceil_div(n, BLOCK_SIZE)
flops: n
tolerance: {rtol: 0.00001, atol: 0.00001}
*/
// First stage of a sum: g_odata[b] = the sum of block b's BLOCK_SIZE elements (the last
// block pads with zeros), the partition of one element per thread, on BLOCK_SIZE / LOADS
// threads per block whose sum is a shared-memory tree. The expert of the
// block_sum_loads_tree lineage; two optimizations, each one code shape (README.md names the
// passes that remove them):
//   - several loads per thread: thread t of block b adds the LOADS elements
//     b * BLOCK_SIZE + t + j * (BLOCK_SIZE / LOADS), j = 0 .. LOADS - 1, in a register
//     (a warp's loads of one j are 32 consecutive floats: coalesced) and stages their sum in
//     its slot: the tree has log2(BLOCK_SIZE / LOADS) levels and barriers, over a block
//     LOADS times smaller, for the same partial;
//   - sequential addressing of the tree: at stride s (halving from the thread count's half)
//     the first s threads add the slot s above theirs, so that the idle threads of a level
//     are whole warps.
// bytes: the input read once, the partials written. flops: one add per element.
template <unsigned int BLOCK_SIZE, unsigned int LOADS>
__global__ void block_sum_loads_tree(const float* g_idata, float* g_odata, unsigned int n) {
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    float sum = 0.0f;
    for (unsigned int j = 0; j < LOADS; j++) {
        unsigned int idx = i + j * (BLOCK_SIZE / LOADS);
        if (idx < n) {
            sum += g_idata[idx];
        }
    }
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned int s = BLOCK_SIZE / LOADS / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        g_odata[blockIdx.x] = sdata[0];
    }
}

/* klc-spec
kernel: block_sum_loads
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
block: ["(BLOCK_SIZE / LOADS) * 4"]
bytes: 4 * n + 4 * ceil_div(n, BLOCK_SIZE)
flops: n
tolerance: {rtol: 0.00001, atol: 0.00001}
*/
// First stage of a sum: g_odata[b] = the sum of block b's BLOCK_SIZE elements (the last
// block pads with zeros), the same partition as one element per thread, on BLOCK_SIZE /
// LOADS threads per block. The expert of the block_sum_loads lineage; two optimizations,
// each one code shape (README.md names the passes that remove them):
//   - several loads per thread: thread t of block b adds the LOADS elements
//     b * BLOCK_SIZE + t + j * (BLOCK_SIZE / LOADS), j = 0 .. LOADS - 1, in a register
//     before the block's sum (a warp's loads of one j are 32 consecutive floats: coalesced),
//     so that the block's fixed work (the shuffles, the barrier, the partial's store) is
//     paid once per LOADS elements instead of once per element;
//   - the block's sum by warp shuffles: each warp adds its 32 values in registers
//     (__shfl_down_sync at offsets 16 .. 1), lane 0 of every warp parks the warp's sum in
//     shared memory, one barrier, warp 0 adds the BLOCK_SIZE / LOADS / 32 warp sums the
//     same way and thread 0 writes the block's total from its register.
// bytes: the input read once, the partials written. flops: one add per element.
template <unsigned int BLOCK_SIZE, unsigned int LOADS>
__global__ void block_sum_loads(const float* g_idata, float* g_odata, unsigned int n) {
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    sdata[tid] = i < n ? g_idata[i] : 0.0f;
    __syncthreads();
    for (int offset = BLOCK_SIZE / 2; offset > 0; offset >>= 1) {
        if (tid < offset) {
            sdata[tid] += sdata[tid + offset];
        }
        __syncthreads();
    }
    if (tid == 0) {
        g_odata[blockIdx.x] = sdata[0];
    }
}

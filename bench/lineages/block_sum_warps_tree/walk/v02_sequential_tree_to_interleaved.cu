/* klc-spec
kernel: block_sum_warps_tree
template: {BLOCK_SIZE: 256, WARPS: 8}
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
block: ["32 * WARPS"]
bytes: 4 * n + 4 * ceil_div(n, BLOCK_SIZE)
flops: n
tolerance: {rtol: 0.00001, atol: 0.00001}
*/
// First stage of a sum: g_odata[s] = the sum of segment s, the BLOCK_SIZE elements from
// s * BLOCK_SIZE (the last segment pads with zeros): the partition of the first reductions,
// one partial per BLOCK_SIZE elements, but a WARP per segment instead of a block, WARPS
// segments per block of 32 * WARPS threads. The expert of the block_sum_warps_tree lineage,
// the warp-synchronous spelling of block_sum_warps; one optimization, one code shape
// (README.md names the pass that removes it):
//   - a warp per segment: warp w of block b sums segment b * WARPS + w. Its lanes read the
//     segment in float4 loads (lane l reads the vectors l, l + 32, ..: 512 consecutive
//     bytes per warp and step, coalesced; the segment starts 4 * BLOCK_SIZE bytes after the
//     buffer's start, 16-byte aligned when the buffer is), or in floats where the segment
//     passes n; each lane parks its sum in its own slot of sdata, and the warp halves its 32
//     slots in a tree (strides 16 .. 1, lanes below the stride adding the slot above, a
//     __syncwarp per level: no block barrier); lane 0 stores the segment's sum where the
//     segment starts below n. The grid has WARPS times fewer blocks than segments (rounded
//     up; the spec spells WARPS's value, 8): the per-block work is paid once per WARPS
//     segments, not once per segment.
// bytes: the input read once, the partials written. flops: one add per element.
template <unsigned int BLOCK_SIZE, unsigned int WARPS>
__global__ void block_sum_warps_tree(const float* g_idata, float* g_odata, unsigned int n) {
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    sdata[tid] = i < n ? g_idata[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < BLOCK_SIZE; s *= 2) {
        if (tid % (2 * s) == 0) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        g_odata[blockIdx.x] = sdata[0];
    }
}

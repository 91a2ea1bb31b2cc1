/* klc-spec
kernel: segment_offsets
template: {BLOCK: 256}
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 777}
args:
  - {name: len, shape: [n], role: in, init: "uniform(0, 4)"}
  - {name: offsets, shape: [n], role: out}
  - {name: seg_total, shape: ["ceil_div(n, 2 * BLOCK)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 2 * BLOCK)"]
block: [BLOCK]
bytes: 8 * n + 4 * ceil_div(n, 2 * BLOCK)
flops: n
tolerance: {rtol: 0.0001, atol: 0.00001}
*/
// Offsets of variable-length records within segments of 2 BLOCK records: offsets[i] = the
// lengths of the records before i in its segment, seg_total[s] = segment s's total length
// (a later pass would add the totals of the segments before). The expert of the
// block_scan_shuffle lineage; one optimization, one code shape (README.md names the pass that
// removes it):
//   - the exclusive scan of the segment's 2 BLOCK values in shared memory runs in registers:
//     each thread adds its pair (slots 2 t and 2 t + 1), a Hillis-Steele scan with
//     __shfl_up_sync scans the pairs of a warp, warp 0 scans the warps' totals in the same
//     way, and each thread writes back its pair's two exclusive sums: 4 block barriers in
//     all, where the work-efficient shared-memory scan (an up-sweep and a down-sweep of a
//     tree over the slots) takes 2 log2(2 BLOCK) barriers and conflicting bank accesses.
//     The segment's total is parked in the last slot for the code that reads it, as the
//     up-sweep leaves it there.
// bytes: the lengths read, the offsets written, the totals written. flops: the n adds of a
// sequential scan.
template <int BLOCK>
__global__ void segment_offsets(const float* len, float* offsets, float* seg_total, int n) {
    __shared__ float temp[2 * BLOCK];
    int tid = threadIdx.x;
    int first = blockIdx.x * 2 * BLOCK;
    for (int k = tid; k < 2 * BLOCK; k += BLOCK) {
        temp[k] = first + k < n ? len[first + k] : 0.0f;
    }
    __syncthreads();
    __shared__ float warp_sums[32];
    float x0 = temp[2 * tid];
    float x1 = temp[2 * tid + 1];
    float run = x0 + x1;
    int lane = tid % 32;
    for (int o = 1; o < 32; o *= 2) {
        float up = __shfl_up_sync(0xffffffffu, run, o);
        if (lane >= o) run += up;
    }
    float before = __shfl_up_sync(0xffffffffu, run, 1);
    if (lane == 0) before = 0.0f;
    if (lane == 31) warp_sums[tid / 32] = run;
    __syncthreads();
    if (tid < 32) {
        float w = tid < BLOCK / 32 ? warp_sums[tid] : 0.0f;
        for (int o = 1; o < 32; o *= 2) {
            float up = __shfl_up_sync(0xffffffffu, w, o);
            if (tid >= o) w += up;
        }
        if (tid < BLOCK / 32) warp_sums[tid] = w;
    }
    __syncthreads();
    if (tid >= 32) before += warp_sums[tid / 32 - 1];
    if (tid == 0) {
        temp[2 * BLOCK - 1] = warp_sums[BLOCK / 32 - 1];
    }
    __syncthreads();
    if (tid == 0) {
        seg_total[blockIdx.x] = temp[2 * BLOCK - 1];
        temp[2 * BLOCK - 1] = 0.0f;
    }
    __syncthreads();
    temp[2 * tid] = before;
    temp[2 * tid + 1] = before + x0;
    __syncthreads();
    for (int k = tid; k < 2 * BLOCK; k += BLOCK) {
        if (first + k < n) offsets[first + k] = temp[k];
    }
}

/* klc-spec
kernel: block_scan_exclusive
template: {BLOCK: 512}
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 777}
args:
  - {name: in, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [n], role: out}
  - {name: block_sums, shape: ["ceil_div(n, 2 * BLOCK)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 2 * BLOCK)"]
block: [BLOCK]
bytes: 8 * n + 4 * ceil_div(n, 2 * BLOCK)
flops: n
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// family: scan
// style: template block size, work-efficient (up-sweep / down-sweep) scan in shared memory, two elements per thread, zero padding past n, a second output for the segment totals
// Exclusive scan of segments of 2 BLOCK elements: out[i] = sum of in[s .. i - 1] where s is
// the start of i's segment, and block_sums[b] = total of segment b (for the pass that would
// add the totals back; not done here).
// bytes: in read, out written, block_sums written. flops: the n adds of a sequential scan.
template <int BLOCK>
__global__ void block_scan_exclusive(const float* in, float* out, float* block_sums, int n) {
    __shared__ float temp[2 * BLOCK];
    int tid = threadIdx.x;
    int base = blockIdx.x * 2 * BLOCK;
    int a = base + tid;
    int b = base + tid + BLOCK;
    temp[tid] = a < n ? in[a] : 0.0f;
    temp[tid + BLOCK] = b < n ? in[b] : 0.0f;

    int offset = 1;
    for (int d = BLOCK; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset *= 2;
    }
    if (tid == 0) {
        block_sums[blockIdx.x] = temp[2 * BLOCK - 1];
        temp[2 * BLOCK - 1] = 0.0f;
    }
    for (int d = 1; d < 2 * BLOCK; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            float t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += t;
        }
    }
    __syncthreads();
    if (a < n) out[a] = temp[tid];
    if (b < n) out[b] = temp[tid + BLOCK];
}

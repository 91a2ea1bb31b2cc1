/* klc-spec
kernel: prefix_scan
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 777}
args:
  - {name: x, shape: [n], role: in, init: "normal(0.5, 1)"}
  - {name: y, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 1024)"]
block: [1024]
bytes: 8 * n
flops: n
*/
// Block-level inclusive scan: x is cut into consecutive segments of 1024 elements (the last
// one may be shorter), and y holds each segment's own inclusive prefix sums:
//   y[i] = x[s] + x[s + 1] + ... + x[i], where s = i - i % 1024.
// The output is per-segment scans, NOT a scan of the whole array (a second pass would add
// the segment totals for that). One block of 1024 threads per segment, one element per
// thread, Hillis-Steele in shared memory (log2(1024) = 10 steps, each read then written
// between barriers).
// bytes: x read once (4n), y written once (4n). flops: the n adds of a sequential scan (the
// minimal work; Hillis-Steele does n log n).
// The default float32 tolerance, relative to the size of the prefix sums, admits any
// reordering of the adds (a work-efficient or warp-shuffle scan).
__global__ void prefix_scan(const float* x, float* y, int n) {
    __shared__ float buf[1024];
    int tid = threadIdx.x;
    int i = blockIdx.x * 1024 + tid;
    buf[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int offset = 1; offset < 1024; offset *= 2) {
        float v = buf[tid];
        if (tid >= offset) {
            v += buf[tid - offset];
        }
        __syncthreads();
        buf[tid] = v;
        __syncthreads();
    }
    if (i < n) {
        y[i] = buf[tid];
    }
}

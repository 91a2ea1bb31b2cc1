/* klc-spec
kernel: absmax_reduce
sizes: {n: 67108864}
args:
  - {name: x, shape: [n], role: in, init: "normal(0, 3)"}
  - {name: amax, shape: [1], role: inout, init: "uniform(0, 0.5)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 512)"]
block: [512]
bytes: 4 * n + 8
flops: n
*/
// family: full-reduction
// style: shared-memory max tree, atomicMax on the float's bit pattern (valid because every value is >= 0), early return of out-of-range threads avoided (they contribute 0)
// amax[0] = max(amax[0], max over i of |x[i]|) (the scale statistic of FP8 training).
// Max is order-independent, so the result is exact and deterministic.
// bytes: x read once, amax read and written. flops: one comparison per element.
__global__ void absmax_reduce(const float* x, float* amax, int n) {
    __shared__ float s[512];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? fabsf(x[i]) : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] = fmaxf(s[tid], s[tid + stride]);
        __syncthreads();
    }
    if (tid == 0) {
        atomicMax((int*)amax, __float_as_int(s[0]));
    }
}

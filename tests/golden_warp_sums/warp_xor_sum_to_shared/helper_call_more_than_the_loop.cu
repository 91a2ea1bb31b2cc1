/* klc-spec
kernel: row_sums
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: y, shape: ["ceil_div(n, 32)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// The helper doubles its value before the butterfly: its loop as written is taken, its call
// is not the loop alone and is left as it is.
__device__ float warpAllReduceSum(float val) {
    val *= 2.0f;
    for (int mask = 16; mask > 0; mask >>= 1)
        val += __shfl_xor_sync(0xffffffff, val, mask);
    return val;
}

__global__ void row_sums(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    v = warpAllReduceSum(v);
    if (threadIdx.x % 32 == 0) y[i / 32] = v;
}

/* klc-spec
kernel: mean_of
sizes: {n: 16777216}
args:
  - {name: losses, shape: [n], role: in, init: "uniform(0, 10)"}
  - {name: out, shape: [1], role: out}
  - {name: n, value: n}
grid: [1]
block: [1024]
bytes: 4 * n + 4
flops: n
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 120
*/
// Near miss (with the default names): the epilogue divides by a local named `total`; the
// last block's sum of the partial sums, declared in the epilogue's scope under that name,
// would shadow it.
__global__ void mean_of(const float* losses, float* out, size_t n) {
    __shared__ float acc[1024];
    const float total = (float)n;
    float s = 0.0f;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
        s += losses[i];
    }
    acc[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) acc[threadIdx.x] += acc[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = acc[0] / total;
}

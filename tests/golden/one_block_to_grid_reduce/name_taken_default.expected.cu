/* klc-spec
kernel: mean_of
sizes: {n: 16777216}
args:
  - {name: losses, shape: [n], role: in, init: "uniform(0, 10)"}
  - {name: out, shape: [1], role: out}
  - {name: n, value: n}
grid: ["(1) * 264"]
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
    static float partials[264];
    static unsigned int ticket;
    __shared__ float acc[1024];
    const float total = (float)n;
    float s = 0.0f;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        s += losses[i];
    }
    acc[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) {
            acc[threadIdx.x] += acc[threadIdx.x + k];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc[0];
        __threadfence();
        if (atomicAdd(&ticket, 1u) == gridDim.x - 1) {
            __threadfence();
            float total_1 = 0.0f;
            for (unsigned int b = 0; b < gridDim.x; ++b) {
                total_1 += __ldcg(&partials[b]);
            }
            acc[0] = total_1;
            ticket = 0;
            out[0] = acc[0] / total;
        }
    }
}

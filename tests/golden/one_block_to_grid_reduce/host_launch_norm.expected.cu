/* klc-spec
kernel: sq_norm
sizes: {n: 8388608}
args:
  - {name: v, shape: [n], role: in, init: "uniform(-1, 1)"}
  - {name: out, shape: [1], role: out}
  - {name: n, value: n}
grid: ["(1) * 264"]
block: [1024]
bytes: 4 * n + 4
flops: 2 * n
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// A norm with __restrict__ pointers, a size_t index, an unbraced tree step and a sqrtf
// epilogue through a pointer. The host wrapper keeps its one-block launch (the launch edit
// scales the spec's grid); the rewritten kernel is correct for any grid of at most 264 blocks.
#include <cuda_runtime.h>

__global__ void sq_norm(const float* __restrict__ v, float* __restrict__ out, size_t n) {
    static float partials[264];
    static unsigned int ticket;
    __shared__ float red[1024];
    float s = 0.0f;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        s += v[i] * v[i];
    }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) {
            red[threadIdx.x] += red[threadIdx.x + k];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = red[0];
        __threadfence();
        if (atomicAdd(&ticket, 1u) == gridDim.x - 1) {
            __threadfence();
            float total = 0.0f;
            for (unsigned int b = 0; b < gridDim.x; ++b) {
                total += __ldcg(&partials[b]);
            }
            red[0] = total;
            ticket = 0;
            *out = sqrtf(red[0]);
        }
    }
}

void norm(const float* v, float* out, size_t n) {
    sq_norm<<<264, 1024>>>(v, out, n);
}

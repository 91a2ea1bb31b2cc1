/* klc-spec
kernel: sum_i64
sizes: {n: 16777216}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: total, shape: [1], role: inout, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n
flops: n
tolerance: {rtol: 0.0001, atol: 0.001}
*/
// A sum with an int64_t index, a shared tree per block and one atomic add per block.
#include <cstdint>
__global__ void sum_i64(const float* x, float* total, int64_t n) {
    __shared__ float s[256];
    float acc = 0.0f;
    {
        int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) acc += x[i];
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, s[0]);
}

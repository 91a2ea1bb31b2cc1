/* klc-spec
kernel: hist_u8
sizes: {n: 1048576}
args:
  - {name: data, shape: [n], type: "uint8_t*", role: in, init: "randint(0, 256)"}
  - {name: bins, shape: [256], type: "int*", role: inout, init: "randint(0, 10)"}
  - {name: n, value: n}
grid: [264]
block: [128]
bytes: n + 2 * 4 * 256
flops: 0
*/
// uint8_t data, int bins, the stride computed in the loop's step, a value read into a local
// before the atomic.
#include <cstdint>
__global__ void hist_u8(const uint8_t* __restrict__ data, int* __restrict__ bins, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    while (idx < n) {
        uint8_t v = data[idx];
        atomicAdd(&bins[v], 1);
        idx += gridDim.x * blockDim.x;
    }
}

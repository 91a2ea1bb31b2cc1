/* klc-spec
kernel: block_tally
sizes: {n: 1048576}
args:
  - {name: y, shape: [n], role: out}
  - {name: seen, shape: ["ceil_div(n, 256)"], role: out}
  - {name: x, shape: [n], role: in}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
*/
#include <cstdint>

// Each block also records that it ran: with fewer blocks, the later slots of `seen` would
// stay unwritten.
__global__ void block_tally(float* y, int* seen, const float* x, int64_t n) {
    {
        int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
        if (i < n) {
            y[i] = 2.0f * x[i];
        }
    }
    if (threadIdx.x == 0) {
        seen[blockIdx.x] = 1;
    }
}

/* klc-spec
kernel: scaled_copy
sizes: {n: 1048576}
args:
  - {name: y, shape: [n], role: out}
  - {name: x, shape: [n], role: in}
  - {name: s, value: 2.0}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
*/
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// One element per thread, its index the grid's 64-bit rank written out.
__global__ void scaled_copy(float* y, const float* x, float s, unsigned long long n) {
    const unsigned long long i = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) {
        y[i] = s * x[i];
    }
}

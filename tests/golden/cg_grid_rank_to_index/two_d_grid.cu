/* klc-spec
kernel: scale2
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: inout}
  - {name: n, value: n}
grid: [64, 64]
block: [256]
*/
// On a two-dimensional grid the rank counts blockIdx.y too: no rewrite.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void scale2(float* x, unsigned int n) {
    auto i = cg::this_grid().thread_rank();
    if (i < n) {
        x[i] *= 2.0f;
    }
}

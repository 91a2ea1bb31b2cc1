/* klc-spec
kernel: scale
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: inout}
  - {name: a, value: 2.5}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Element-wise scale indexed by the grid group's thread rank.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void scale(float* x, float a, unsigned int n) {
    auto i = cg::this_grid().thread_rank();
    if (i < n) {
        x[i] *= a;
    }
}

/* klc-spec
kernel: byte_hist
sizes: {n: 4194304}
args:
  - {name: data, shape: [n], role: in, init: "randint(0, 256)"}
  - {name: weight, shape: [n], role: in, init: "randint(0, 4)"}
  - {name: hist, shape: [256], role: inout, init: "randint(0, 1000)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 512)"]
block: [512]
*/
// 64-bit element index, bytes as bins (the type bounds the bin below 256), a weight per
// element, a bare (unbraced) atomicAdd under the bounds check.
#include <cstddef>
__global__ void byte_hist(const unsigned char* __restrict__ data, const unsigned int* weight,
                          unsigned int* hist, size_t n) {
    size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (gid < n)
        atomicAdd(&hist[data[gid]], weight[gid]);
}

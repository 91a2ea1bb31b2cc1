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
    __shared__ unsigned int block_counts[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        block_counts[b] = 0;
    }
    __syncthreads();
    {
        size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (gid < n) {
            atomicAdd(&block_counts[data[gid]], weight[gid]);
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        unsigned int c = block_counts[b];
        if (c != 0) {
            atomicAdd(&hist[b], c);
        }
    }
}

/* klc-spec
kernel: mean_all
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [1], role: out}
  - {name: n, value: n}
grid: [1]
block: [512]
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// One block strides the whole input, then a tree over blockDim.x with unbraced ifs, a
// 64-bit size, `T *x` spelling, and the tree's result read by thread 0 only.
#include <cstddef>
__global__ void mean_all(const float *x, float *out, size_t n) {
    __shared__ float buf[512];
    float s = 0.0f;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) s += x[i];
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 32; k >>= 1) {
        if (threadIdx.x < k) {
            buf[threadIdx.x] += buf[threadIdx.x + k];
        }
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        buf[threadIdx.x] += buf[threadIdx.x + 32];
        __syncwarp();
        if (threadIdx.x < 16) {
            buf[threadIdx.x] += buf[threadIdx.x + 16];
        }
        __syncwarp();
        if (threadIdx.x < 8) {
            buf[threadIdx.x] += buf[threadIdx.x + 8];
        }
        __syncwarp();
        if (threadIdx.x < 4) {
            buf[threadIdx.x] += buf[threadIdx.x + 4];
        }
        __syncwarp();
        if (threadIdx.x < 2) {
            buf[threadIdx.x] += buf[threadIdx.x + 2];
        }
        __syncwarp();
        if (threadIdx.x < 1) {
            buf[threadIdx.x] += buf[threadIdx.x + 1];
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) out[0] = buf[0] / n;
}

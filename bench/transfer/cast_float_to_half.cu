/* klc-spec
kernel: float_to_half
sizes: {n: 67108864}
args:
  - {name: dst, shape: [n], role: out}
  - {name: src, shape: [n], role: in, init: "normal(0, 4)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n + 2 * n
flops: 0
*/
// family: elementwise
// style: type cast (float to __half), cuda_fp16.h, one element per thread
// dst[i] = (half) src[i], round to nearest.
// bytes: src read (4n), dst written (2n). flops: none counted.
#include <cuda_fp16.h>

__global__ void float_to_half(__half* dst, const float* src, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = __float2half(src[i]);
    }
}

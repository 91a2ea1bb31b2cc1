/* klc-spec
kernel: dequant_half_grouped
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000064}
  - {n: 640}
args:
  - {name: q, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: scales, shape: ["n // 128"], role: in, init: "uniform(0.01, 2)"}
  - {name: out, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 2 * n + 4 * (n // 128) + 4 * n
flops: n
*/
// family: elementwise
// style: type cast (__half to float) with a per-group scale, #define group size, input first
// out[i] = float(q[i]) * scales[i / GROUP]: half values dequantized with one float scale per
// group of 128 consecutive elements. n must be a multiple of GROUP.
// bytes: q read (2n), scales read (4n / 128), out written (4n). flops: one multiply each.
#include <cuda_fp16.h>

#define GROUP 128

__global__ void dequant_half_grouped(const __half *q, const float *scales, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = __half2float(q[i]) * scales[i / GROUP];
    }
}

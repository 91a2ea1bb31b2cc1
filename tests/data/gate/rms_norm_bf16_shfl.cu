/* klc-spec
kernel: rms_norm_bf16_shfl
sizes: {rows: 16384, cols: 2048}
verify_sizes:
  - {rows: 64, cols: 2048}
  - {rows: 37, cols: 1000}
  - {rows: 3, cols: 33}
args:
  - {name: out, shape: [rows, cols], role: out}
  - {name: inp, shape: [rows, cols], role: in, init: normal}
  - {name: weight, shape: [cols], role: in, init: "uniform(0.5, 1.5)"}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: [rows]
block: [256]
bytes: 4 * rows * cols + 2 * cols
flops: 4 * rows * cols
*/
// A candidate for rms_norm_bf16.cu: the block's sum by warp shuffles, then the 8 warp sums
// in order (another order of the float adds).
// RMS norm of bfloat16 rows: the sum of squares is accumulated in float (a block reduction in
// shared memory), the output rounded to bf16. One block of 256 threads per row.
// bytes: inp read once, out written once (2 bytes each), weight once.
// A reordered float reduction changes the bf16 output by at most one rounding step, inside
// the gate's bf16 tolerance.
#include <cuda_bf16.h>

__global__ void rms_norm_bf16_shfl(__nv_bfloat16* out, const __nv_bfloat16* inp,
                              const __nv_bfloat16* weight, int rows, int cols) {
    __shared__ float partial[256];
    int row = blockIdx.x;
    int tid = threadIdx.x;
    if (row >= rows) {
        return;
    }
    const __nv_bfloat16* x = inp + (size_t)row * cols;
    float sum = 0.0f;
    for (int c = tid; c < cols; c += blockDim.x) {
        float v = __bfloat162float(x[c]);
        sum += v * v;
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    }
    if (tid % 32 == 0) {
        partial[tid / 32] = sum;
    }
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < 8; w++) {
        total += partial[w];
    }
    float scale = rsqrtf(total / cols + 1e-6f);
    __nv_bfloat16* y = out + (size_t)row * cols;
    for (int c = tid; c < cols; c += blockDim.x) {
        y[c] = __float2bfloat16(__bfloat162float(x[c]) * scale * __bfloat162float(weight[c]));
    }
}

/* klc-spec
kernel: rms_norm_bf16_next_weight
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
// A wrong candidate for rms_norm_bf16.cu: each element scaled by the next column's weight.
// RMS norm of bfloat16 rows: the sum of squares is accumulated in float (a block reduction in
// shared memory), the output rounded to bf16. One block of 256 threads per row.
// bytes: inp read once, out written once (2 bytes each), weight once.
// A reordered float reduction changes the bf16 output by at most one rounding step, inside
// the gate's bf16 tolerance.
#include <cuda_bf16.h>

__global__ void rms_norm_bf16_next_weight(__nv_bfloat16* out, const __nv_bfloat16* inp,
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
    partial[tid] = sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (tid < stride) {
            partial[tid] += partial[tid + stride];
        }
        __syncthreads();
    }
    float scale = rsqrtf(partial[0] / cols + 1e-6f);
    __nv_bfloat16* y = out + (size_t)row * cols;
    for (int c = tid; c < cols; c += blockDim.x) {
        y[c] = __float2bfloat16(__bfloat162float(x[c]) * scale * __bfloat162float(weight[(c + 1) % cols]));
    }
}

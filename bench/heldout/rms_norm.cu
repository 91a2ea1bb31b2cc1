/* klc-spec
kernel: rms_norm
sizes: {rows: 16384, cols: 4096}
verify_sizes:
  - {rows: 64, cols: 4096}
  - {rows: 301, cols: 1000}
  - {rows: 7, cols: 37}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(0.5, 1)"}
  - {name: weight, shape: [cols], role: in, init: "uniform(0.5, 1.5)"}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
  - {name: eps, value: 0.00001}
grid: [rows]
block: [256]
bytes: 8 * rows * cols + 4 * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0002, atol: 0.00001}
*/
// RMS norm over the rows of a row-major rows x cols matrix:
//   y[r, c] = x[r, c] / sqrt(mean over c of x[r, c]^2 + eps) * weight[c].
// One block of 256 threads per row: each thread adds the squares of the elements it strides
// over, the block combines the 256 partial sums with a tree in shared memory, then every
// thread scales its elements (reading x a second time).
// bytes: x read once and y written once (8 * rows * cols), weight read once (4 * cols).
// flops: a multiply-add per element for the sum of squares (2), and two multiplies per
// element for the output (2).
// The block must have 256 threads (the size of the shared array, a power of two for the
// tree).
__global__ void rms_norm(const float* x, const float* weight, float* y, int rows, int cols,
                         float eps) {
    __shared__ float partial[256];
    int r = blockIdx.x;
    int tid = threadIdx.x;
    if (r >= rows) {
        return;
    }
    float sum = 0.0f;
    for (int c = tid; c < cols; c += blockDim.x) {
        float v = x[r * cols + c];
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
    float scale = 1.0f / sqrtf(partial[0] / cols + eps);
    for (int c = tid; c < cols; c += blockDim.x) {
        y[r * cols + c] = x[r * cols + c] * scale * weight[c];
    }
}

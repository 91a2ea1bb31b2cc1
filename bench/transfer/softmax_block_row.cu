/* klc-spec
kernel: softmax_rows_block
sizes: {rows: 8192, cols: 8192}
verify_sizes:
  - {rows: 64, cols: 4096}
  - {rows: 33, cols: 1001}
  - {rows: 3, cols: 7}
args:
  - {name: x, shape: [rows, cols], role: in, init: "normal(0, 3)"}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: [rows]
block: [256]
bytes: 8 * rows * cols
flops: 4 * rows * cols
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// family: row-reduction
// style: block per row, #define block size, shared-memory tree reductions, T *x spacing, 64-bit row offsets, fmaxf
// Softmax over each row of a rows x cols matrix, one block of BLOCK_SIZE threads per row:
// a block-wide max, a block-wide sum of exponentials, then y = exp(x - max) / sum (the
// exponentials are computed twice; x is read three times).
// bytes: x read once, y written once (8 rows cols). flops: 4 per element (expf not counted).
#define BLOCK_SIZE 256

__global__ void softmax_rows_block(const float *x, float *y, int rows, int cols) {
    __shared__ float red[BLOCK_SIZE];
    int row = blockIdx.x;
    int tid = threadIdx.x;
    const float *xr = x + (long)row * cols;
    float *yr = y + (long)row * cols;

    float m = -INFINITY;
    for (int c = tid; c < cols; c += BLOCK_SIZE) {
        m = fmaxf(m, xr[c]);
    }
    red[tid] = m;
    __syncthreads();
    for (int s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s) {
            red[tid] = fmaxf(red[tid], red[tid + s]);
        }
        __syncthreads();
    }
    m = red[0];
    __syncthreads();

    float sum = 0.0f;
    for (int c = tid; c < cols; c += BLOCK_SIZE) {
        sum += expf(xr[c] - m);
    }
    red[tid] = sum;
    __syncthreads();
    for (int s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s) {
            red[tid] += red[tid + s];
        }
        __syncthreads();
    }
    float inv = 1.0f / red[0];

    for (int c = tid; c < cols; c += BLOCK_SIZE) {
        yr[c] = expf(xr[c] - m) * inv;
    }
}

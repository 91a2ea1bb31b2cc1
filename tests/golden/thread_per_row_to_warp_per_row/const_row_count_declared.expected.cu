/* klc-spec
kernel: row_max_const
sizes: {batch: 8, heads: 16, len: 512}
verify_sizes:
  - {batch: 2, heads: 4, len: 256}
  - {batch: 3, heads: 5, len: 77}
args:
  - {name: out, shape: [batch * heads], role: out}
  - {name: x, shape: [batch * heads, len], role: in, init: normal}
  - {name: batch, value: batch}
  - {name: heads, value: heads}
  - {name: len, value: len}
grid: ["(ceil_div(batch * heads, 256)) * 32"]
block: [256]
bytes: 4 * batch * heads * len
flops: batch * heads * len
*/
// A row maximum over (batch, head) rows: the row index a const local, the row count a const
// local declared between it and the check.
__global__ void row_max_const(float* out, const float* x, int batch, int heads, int len) {
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    const int nrows = batch * heads;
    if (row < nrows) {
        float m = -INFINITY;
        for (int j = lane; j < len; j += 32) {
            m = fmaxf(m, x[row * len + j]);
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
        }
        out[row] = m;
    }
}

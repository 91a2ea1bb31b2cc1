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
grid: ["ceil_div(batch * heads, 256)"]
block: [256]
bytes: 4 * batch * heads * len
flops: batch * heads * len
*/
// A row maximum over (batch, head) rows: the row index a const local, the row count a const
// local declared between it and the check.
__global__ void row_max_const(float* out, const float* x, int batch, int heads, int len) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    const int nrows = batch * heads;
    if (row < nrows) {
        float m = -INFINITY;
        for (int j = 0; j < len; j++) {
            m = fmaxf(m, x[row * len + j]);
        }
        out[row] = m;
    }
}

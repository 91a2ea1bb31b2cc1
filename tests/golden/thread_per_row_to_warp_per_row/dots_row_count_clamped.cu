/* klc-spec
kernel: row_sums_clamped
sizes: {batch: 16, seq: 256, dim: 512}
args:
  - {name: out, shape: [batch * seq], role: out}
  - {name: x, shape: [batch * seq, dim], role: in, init: normal}
  - {name: batch, value: batch}
  - {name: seq, value: seq}
  - {name: dim, value: dim}
  - {name: limit, value: batch * seq}
grid: ["ceil_div(batch * seq, 256)"]
block: [256]
bytes: 4 * batch * seq * dim
flops: batch * seq * dim
tolerance: {rtol: 0.0001, atol: 0.00001}
*/
// No match: the row count declared between the index and its check is assigned again
// there (clamped to a limit), so the value the check reads is not the one declared.
__global__ void row_sums_clamped(float* out, const float* x, int batch, int seq, int dim,
                                 int limit) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    int nrows = batch * seq;
    nrows = min(nrows, limit);
    if (r < nrows) {
        float acc = 0.0f;
        for (int j = 0; j < dim; j++) {
            acc += x[r * dim + j];
        }
        out[r] = acc;
    }
}

/* klc-spec
kernel: rms_scale_rows
sizes: {batch: 16, seq: 256, dim: 1024}
verify_sizes:
  - {batch: 2, seq: 128, dim: 1024}
  - {batch: 3, seq: 333, dim: 999}
  - {batch: 1, seq: 37, dim: 5}
args:
  - {name: y, shape: [batch * seq, dim], role: out}
  - {name: x, shape: [batch * seq, dim], role: in, init: normal}
  - {name: g, shape: [dim], role: in, init: normal}
  - {name: batch, value: batch}
  - {name: seq, value: seq}
  - {name: dim, value: dim}
grid: ["ceil_div(batch * seq, 256)"]
block: [256]
bytes: 8 * batch * seq * dim
flops: 4 * batch * seq * dim
tolerance: {rtol: 0.0001, atol: 0.00001}
timeout_s: 180
*/
// A first version of an RMS norm: one thread per (batch, position) row, the row count
// computed in a local declared between the index and its check (the statements the dots
// skip declare the name the check reads after them).
__global__ void rms_scale_rows(float* y, const float* x, const float* g, int batch, int seq,
                               int dim) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    int nrows = batch * seq;
    if (r < nrows) {
        float acc = 0.0f;
        for (int j = 0; j < dim; j++) {
            acc += x[r * dim + j] * x[r * dim + j];
        }
        float inv = 1.0f / sqrtf(acc / dim + 1e-6f);
        for (int j = 0; j < dim; j++) {
            y[r * dim + j] = x[r * dim + j] * inv * g[j];
        }
    }
}

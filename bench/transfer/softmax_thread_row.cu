/* klc-spec
kernel: softmax_forward
sizes: {N: 16384, C: 2048}
verify_sizes:
  - {N: 256, C: 512}
  - {N: 301, C: 1001}
  - {N: 5, C: 3}
args:
  - {name: out, shape: [N, C], role: out}
  - {name: inp, shape: [N, C], role: in, init: "normal(0, 3)"}
  - {name: N, value: N}
  - {name: C, value: C}
grid: ["ceil_div(N, 256)"]
block: [256]
bytes: 8 * N * C
flops: 4 * N * C
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 180
*/
// family: row-reduction
// style: thread per row, row pointers, -INFINITY, if-style max, output used as scratch
// Softmax over each row of an N x C matrix. One thread per row: the maximum, then the
// exponentials (written to out) and their sum, then a pass that normalises out.
// bytes: inp read once, out written once (8NC). flops: max, subtract, add, scale (4 per
// element); expf not counted.
__global__ void softmax_forward(float* out, const float* inp, int N, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        const float* inp_row = inp + i * C;
        float* out_row = out + i * C;

        float maxval = -INFINITY;
        for (int j = 0; j < C; j++) {
            if (inp_row[j] > maxval) {
                maxval = inp_row[j];
            }
        }
        float sum = 0.0f;
        for (int j = 0; j < C; j++) {
            out_row[j] = expf(inp_row[j] - maxval);
            sum += out_row[j];
        }
        float norm = 1.0f / sum;
        for (int j = 0; j < C; j++) {
            out_row[j] *= norm;
        }
    }
}

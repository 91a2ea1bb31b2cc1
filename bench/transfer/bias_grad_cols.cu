/* klc-spec
kernel: bias_backward
sizes: {BT: 32768, OC: 2048}
verify_sizes:
  - {BT: 256, OC: 1024}
  - {BT: 301, OC: 999}
  - {BT: 3, OC: 5}
args:
  - {name: dbias, shape: [OC], role: inout, init: "normal(0, 0.1)"}
  - {name: dout, shape: [BT, OC], role: in, init: normal}
  - {name: BT, value: BT}
  - {name: OC, value: OC}
grid: ["ceil_div(OC, 256)"]
block: [256]
bytes: 4 * BT * OC + 8 * OC
flops: BT * OC
tolerance: {rtol: 0.0002, atol: 0.00001}
timeout_s: 120
*/
// family: column-reduction
// style: thread per column, gradient accumulated into the output (+=), plain int indexing
// Bias gradient of a linear layer: dbias[o] += sum over rows of dout[row, o].
// One thread per output channel walks down its column (neighbouring threads read
// neighbouring addresses, so loads coalesce; only OC threads run).
// bytes: dout read once, dbias read and written. flops: one add per element.
__global__ void bias_backward(float* dbias, const float* dout, int BT, int OC) {
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o < OC) {
        float sum = 0.0f;
        for (int i = 0; i < BT; i++) {
            sum += dout[i * OC + o];
        }
        dbias[o] += sum;
    }
}

/* klc-spec
kernel: linear_forward
sizes: {BT: 4096, C: 768, OC: 3072}
verify_sizes:
  - {BT: 64, C: 128, OC: 96}
  - {BT: 37, C: 29, OC: 51}
  - {BT: 1, C: 2, OC: 3}
args:
  - {name: out, shape: [BT, OC], role: out}
  - {name: inp, shape: [BT, C], role: in, init: normal}
  - {name: weight, shape: [OC, C], role: in, init: "normal(0, 0.05)"}
  - {name: bias, shape: [OC], role: in, init: normal}
  - {name: BT, value: BT}
  - {name: C, value: C}
  - {name: OC, value: OC}
grid: ["ceil_div(BT * OC, 256)"]
block: [256]
bytes: 4 * BT * C + 4 * OC * C + 4 * OC + 4 * BT * OC
flops: 2 * BT * C * OC
tolerance: {rtol: 0.0005, atol: 0.00001}
timeout_s: 240
*/
// family: gemm
// style: thread per output on a 1D grid (row and column from / and %), weight stored (OC, C) as a linear layer keeps it, row pointers, bias added first
// Linear layer forward: out[bt, o] = bias[o] + sum over c of inp[bt, c] * weight[o, c].
// bytes: inp, weight, bias read once, out written once. flops: 2 BT C OC.
__global__ void linear_forward(float* out, const float* inp, const float* weight,
                               const float* bias, int BT, int C, int OC) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < BT * OC) {
        int bt = idx / OC;
        int o = idx % OC;
        const float* inp_bt = inp + bt * C;
        const float* w_o = weight + o * C;
        float val = bias[o];
        for (int i = 0; i < C; i++) {
            val += inp_bt[i] * w_o[i];
        }
        out[bt * OC + o] = val;
    }
}

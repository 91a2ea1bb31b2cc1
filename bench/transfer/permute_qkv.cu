/* klc-spec
kernel: permute_qkv
sizes: {B: 8, T: 1024, NH: 16, HS: 64}
verify_sizes:
  - {B: 2, T: 64, NH: 4, HS: 32}
  - {B: 1, T: 37, NH: 3, HS: 7}
  - {B: 1, T: 2, NH: 1, HS: 3}
args:
  - {name: q, shape: [B, NH, T, HS], role: out}
  - {name: k, shape: [B, NH, T, HS], role: out}
  - {name: v, shape: [B, NH, T, HS], role: out}
  - {name: inp, shape: [B, T, 3, NH, HS], role: in, init: normal}
  - {name: B, value: B}
  - {name: T, value: T}
  - {name: NH, value: NH}
  - {name: HS, value: HS}
grid: ["ceil_div(B * NH * T * HS, 256)"]
block: [256]
bytes: 24 * B * T * NH * HS
flops: 0
*/
// family: transpose
// style: thread per output element, index unpacked with / and %, three outputs, the input offset written out in full
// Split a fused QKV projection (B, T, 3, NH, HS) into q, k, v, each (B, NH, T, HS).
// bytes: inp read once (12 B T NH HS), q, k, v written (12 B T NH HS). flops: none.
__global__ void permute_qkv(float* q, float* k, float* v, const float* inp,
                            int B, int T, int NH, int HS) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < B * NH * T * HS) {
        int b = idx / (NH * T * HS);
        int rest = idx % (NH * T * HS);
        int nh = rest / (T * HS);
        rest = rest % (T * HS);
        int t = rest / HS;
        int hs = rest % HS;
        int inp_idx = (b * T * 3 * NH * HS) + (t * 3 * NH * HS) + (0 * NH * HS) + (nh * HS) + hs;
        q[idx] = inp[inp_idx];
        k[idx] = inp[inp_idx + NH * HS];
        v[idx] = inp[inp_idx + 2 * (NH * HS)];
    }
}

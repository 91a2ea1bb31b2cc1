/* klc-spec
kernel: attention_value_sum
sizes: {BH: 64, T: 1024, HS: 64}
verify_sizes:
  - {BH: 2, T: 128, HS: 64}
  - {BH: 3, T: 37, HS: 24}
  - {BH: 1, T: 2, HS: 3}
args:
  - {name: out, shape: [BH, T, HS], role: out}
  - {name: att, shape: [BH, T, T], role: in, init: "uniform(0, 0.01)"}
  - {name: v, shape: [BH, T, HS], role: in, init: normal}
  - {name: BH, value: BH}
  - {name: T, value: T}
  - {name: HS, value: HS}
grid: ["ceil_div(BH * T * HS, 256)"]
block: [256]
bytes: 2 * BH * T * (T + 1) + 8 * BH * T * HS
flops: BH * T * (T + 1) * HS
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 240
*/
// family: attention
// style: thread per output element, causal loop bound, index unpacked with / and %, row pointers into the attention matrix
// Weighted sum of values under causal attention: for head bh, query t, channel i,
//   out[bh, t, i] = sum over t2 <= t of att[bh, t, t2] * v[bh, t2, i].
// Entries of att above the diagonal are never read.
// bytes: the lower triangle of att (4 BH T (T + 1) / 2), v read and out written
// (8 BH T HS). flops: a multiply-add per (t2 <= t, i).
__global__ void attention_value_sum(float* out, const float* att, const float* v,
                                    int BH, int T, int HS) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < BH * T * HS) {
        int i = idx % HS;
        int t = (idx / HS) % T;
        int bh = idx / (HS * T);
        const float* att_row = att + ((size_t)bh * T + t) * T;
        const float* vb = v + (size_t)bh * T * HS;
        float acc = 0.0f;
        for (int t2 = 0; t2 <= t; t2++) {
            acc += att_row[t2] * vb[t2 * HS + i];
        }
        out[idx] = acc;
    }
}

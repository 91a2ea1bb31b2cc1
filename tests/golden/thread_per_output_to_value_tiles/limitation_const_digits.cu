/* klc-spec
kernel: attention_values_direct
sizes: {BH: 8, T: 256, HS: 64}
verify_sizes:
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
*/
// A limitation: the digits declared const (`const int i = idx % HS;`). The anchor binds
// their type with a type metavariable, which does not take the const of a local whose
// initialiser does not read the thread's index, so the anchor finds no match
// (direct_indexing.cu is the same kernel with int digits).
__global__ void attention_values_const(float* out, const float* att, const float* v,
                                        int BH, int T, int HS) {
    int idx = threadIdx.x + blockDim.x * blockIdx.x;
    if (idx < BH * T * HS) {
        const int i = idx % HS;
        const int t = (idx / HS) % T;
        const int bh = idx / (T * HS);
        float acc = 0.0f;
        for (int t2 = 0; t2 <= t; ++t2) {
            acc += att[(bh * T + t) * T + t2] * v[(bh * T + t2) * HS + i];
        }
        out[idx] = acc;
    }
}

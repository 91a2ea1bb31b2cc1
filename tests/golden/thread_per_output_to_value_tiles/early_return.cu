/* klc-spec
kernel: attention_values_early_return
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
// The early return past the last output: the anchor's if, whose body holds fixed statements
// (the index's digits) around its runs, takes `if (idx >= n) return;` and the rest of the
// kernel body (the early_return isomorphism; direct_indexing.cu is the same kernel with the
// if).
__global__ void attention_values_early_return(float* out, const float* att, const float* v,
                                    int BH, int T, int HS) {
    int idx = threadIdx.x + blockDim.x * blockIdx.x;
    if (idx >= BH * T * HS) return;
    int i = idx % HS;
    int t = (idx / HS) % T;
    int bh = idx / (T * HS);
    float acc = 0.0f;
    for (int t2 = 0; t2 <= t; ++t2) {
        acc += att[(bh * T + t) * T + t2] * v[(bh * T + t2) * HS + i];
    }
    out[idx] = acc;
}

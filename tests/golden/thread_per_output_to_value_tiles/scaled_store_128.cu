/* klc-spec
kernel: attention_values_scaled
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
grid: ["ceil_div(BH * T * HS, 128)"]
block: [128]
bytes: 2 * BH * T * (T + 1) + 8 * BH * T * HS
flops: BH * T * (T + 1) * HS
*/
// A block of 128 threads (the tile's thread grid is then 8 x 16: .holes), row pointers
// with size_t offsets, and a scale applied at the store.
__global__ void attention_values_scaled(float* out, const float* att, const float* v,
                                        int BH, int T, int HS) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < BH * T * HS) {
        int i = idx % HS;
        int t = (idx / HS) % T;
        int bh = idx / (HS * T);
        const float* w = att + ((size_t)bh * T + t) * T;
        const float* vals = v + (size_t)bh * T * HS + i;
        float acc = 0.0f;
        for (int t2 = 0; t2 <= t; t2++) {
            acc += w[t2] * vals[(size_t)t2 * HS];
        }
        out[idx] = 0.5f * acc;
    }
}

/* klc-spec
kernel: attention_scores_warp
sizes: {B: 2, NH: 4, T: 256, HS: 64}
verify_sizes:
  - {B: 2, NH: 3, T: 37, HS: 24}
  - {B: 1, NH: 1, T: 70, HS: 80}
args:
  - {name: att, shape: [B, NH, T, T], role: out}
  - {name: q, shape: [B, NH, T, HS], role: in, init: normal}
  - {name: k, shape: [B, NH, T, HS], role: in, init: normal}
  - {name: B, value: B}
  - {name: NH, value: NH}
  - {name: T, value: T}
  - {name: HS, value: HS}
grid: ["ceil_div(B * NH * T * 32, 128)"]
block: [128]
bytes: 4 * B * NH * T * T + 8 * B * NH * T * HS
flops: B * NH * T * (T + 1) * HS + 2 * B * NH * T * (T + 1)
*/
// Causal attention scores, a warp per query row, in another spelling: the warp's row from a
// shift, the lane from a mask, the key's row indexed in place, the scores scaled before the
// maximum, a block of 128 threads (4 warp tiles).
__global__ void attention_scores_warp(float* att, const float* q, const float* k,
                                      int B, int NH, int T, int HS) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (row < B * NH * T) {
        int t = row % T;
        const float* qrow = q + (size_t)row * HS;
        const float* kbase = k + (size_t)(row / T) * T * HS;
        float* out = att + (size_t)row * T;
        float scale = rsqrtf((float)HS);
        float m = -INFINITY;
        for (int t2 = lane; t2 <= t; t2 += 32) {
            float s = 0.0f;
            for (int i = 0; i < HS; i++) {
                s += qrow[i] * kbase[(size_t)t2 * HS + i];
            }
            s = s * scale;
            m = fmaxf(m, s);
            out[t2] = s;
        }
        for (int o = 16; o > 0; o >>= 1) {
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        }
        float sum = 0.0f;
        for (int t2 = lane; t2 <= t; t2 += 32) {
            float e = expf(out[t2] - m);
            out[t2] = e;
            sum += e;
        }
        for (int o = 16; o > 0; o >>= 1) {
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
        }
        for (int t2 = lane; t2 < T; t2 += 32) {
            out[t2] = t2 <= t ? out[t2] / sum : 0.0f;
        }
    }
}

/* klc-spec
kernel: attention_scores_lanes
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
grid: ["ceil_div(B * NH * T * 32, 256)"]
block: [256]
bytes: 4 * B * NH * T * T + 8 * B * NH * T * HS
flops: B * NH * T * (T + 1) * HS + 2 * B * NH * T * (T + 1)
*/
// A near miss: the lane-strided sweep's bound comes from the thread's own row (one row per
// thread, not per warp), so the lanes of a warp run different numbers of key steps and
// would not all reach the tile's __syncwarp. Not rewritten.
__global__ void attention_scores_lanes(float* att, const float* q, const float* k,
                                       int B, int NH, int T, int HS) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    if (idx < B * NH * T) {
        int t = idx % T;
        const float* qt = q + (size_t)idx * HS;
        const float* kb = k + (size_t)(idx / T) * T * HS;
        float* row = att + (size_t)idx * T;
        for (int t2 = lane; t2 <= t; t2 += 32) {
            const float* kt = kb + (size_t)t2 * HS;
            float dot = 0.0f;
            for (int i = 0; i < HS; i++) {
                dot += qt[i] * kt[i];
            }
            row[t2] = dot;
        }
    }
}

/* klc-spec
kernel: attention_key_tile
sizes: {B: 4, NH: 16, T: 1024, HS: 64}
verify_sizes:
  - {B: 1, NH: 2, T: 128, HS: 64}
  - {B: 2, NH: 3, T: 37, HS: 24}
  - {B: 1, NH: 1, T: 3, HS: 2}
  - {B: 1, NH: 2, T: 70, HS: 80}
args:
  - {name: att, shape: [B, NH, T, T], role: out}
  - {name: q, shape: [B, NH, T, HS], role: in, init: normal}
  - {name: k, shape: [B, NH, T, HS], role: in, init: normal}
  - {name: B, value: B}
  - {name: NH, value: NH}
  - {name: T, value: T}
  - {name: HS, value: HS}
grid: ["ceil_div(ceil_div(B * NH * T * 32, 256), 32)"]
block: [256]
bytes: 4 * B * NH * T * T + 8 * B * NH * T * HS
flops: B * NH * T * (T + 1) * HS + 2 * B * NH * T * (T + 1)
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 240
*/
// Causal attention probabilities: for query t of head (b, h),
//   att[b, h, t, t2] = softmax over t2 <= t of (q[t] . k[t2]) / sqrt(HS), 0 for t2 > t.
// The row of att holds the scores before they are exponentiated.
// The expert of the attention_key_tile lineage; each optimization is one separable code
// shape (README.md names the pass that removes it):
//   - __launch_bounds__(THREADS);
//   - const __restrict__ inputs, a __restrict__ output (all used as row pointers);
//   - one warp per query row (as in the attention_rows lineage): lanes own the keys
//     t2 % 32 of the causal row in every sweep, the maximum and the sum are combined by xor
//     shuffles;
//   - the keys of the score sweep staged in shared memory, a tile per warp: the warp walks
//     its keys 32 at a time (key t0 + lane is the lane's), and the head dimension KEY_DIMS at
//     a time; for each chunk the lanes load the 32 keys' KEY_DIMS values into registers
//     (unrolled: 32 coalesced 128-byte reads of k in flight, where the lane-strided sweep
//     read 32 rows HS apart for every element), __syncwarp (the tile's last readers are
//     done), store them into the warp's tile row by row, __syncwarp, and each
//     lane takes its key's products from its row of the tile (rows padded to KEY_DIMS + 1
//     floats: the 32 lanes read 32 banks). Keys past t and dimensions past HS are staged as
//     zeros and never used; every lane adds its key's products in the same order as before,
//     so the scores are the same numbers.
// bytes: att written (4 B NH T T), q and k read once (8 B NH T HS). flops: the dot products
// (2 HS per pair, T (T + 1) / 2 pairs per head) and the softmax (4 per kept pair).
#define THREADS 256
#define KEY_DIMS 32

__global__ void 
attention_key_tile(float* __restrict__ att, const float* q,
                   const float* k, int B, int NH, int T, int HS) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < B * NH * T) {
        const int t = idx % T;
        const int bh = idx / T;
        const float* qt = q + (size_t)idx * HS;
        const float* kb = k + (size_t)bh * T * HS;
        float* row = att + (size_t)idx * T;
        const float scale = 1.0f / sqrtf((float)HS);
        float maxval = -INFINITY;
        for (int t2 = 0; t2 <= t; t2++) {
            const float* kt = kb + (size_t)t2 * HS;
            float dot = 0.0f;
            for (int i = 0; i < HS; i++) {
                dot += qt[i] * kt[i];
            }
            dot *= scale;
            maxval = fmaxf(maxval, dot);
            row[t2] = dot;
        }
        float sum = 0.0f;
        for (int t2 = 0; t2 <= t; t2++) {
            const float e = expf(row[t2] - maxval);
            row[t2] = e;
            sum += e;
        }
        const float inv = 1.0f / sum;
        for (int t2 = 0; t2 < T; t2++) {
            row[t2] = t2 <= t ? row[t2] * inv : 0.0f;
        }
    }
}

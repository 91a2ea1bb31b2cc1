/* klc-spec
kernel: attention_softmax_rows
sizes: {B: 4, NH: 16, T: 1024, HS: 64}
verify_sizes:
  - {B: 1, NH: 2, T: 128, HS: 64}
  - {B: 2, NH: 3, T: 37, HS: 24}
  - {B: 1, NH: 1, T: 3, HS: 2}
args:
  - {name: att, shape: [B, NH, T, T], role: out}
  - {name: q, shape: [B, NH, T, HS], role: in, init: normal}
  - {name: k, shape: [B, NH, T, HS], role: in, init: normal}
  - {name: B, value: B}
  - {name: NH, value: NH}
  - {name: T, value: T}
  - {name: HS, value: HS}
grid: ["(ceil_div(B * NH * T, 256)) * 32"]
block: [256]
bytes: 4 * B * NH * T * T + 8 * B * NH * T * HS
flops: B * NH * T * (T + 1) * HS + 2 * B * NH * T * (T + 1)
tolerance: {rtol: 0.0001, atol: 0.000001}
timeout_s: 240
*/
// bench/transfer/attention_scores_softmax.cu after thread_per_row_to_warp_per_row (the
// skill that comes before the key tile in the attention_key_tile lineage's recipe).
// family: attention
// style: thread per query row, causal mask by loop bound, -INFINITY, if-style max, size_t row pointers, early return, 1/sqrt(HS) scale
// Causal attention probabilities: for query t of head (b, h),
//   att[b, h, t, t2] = softmax over t2 <= t of (q[t] . k[t2]) / sqrt(HS), 0 for t2 > t.
// The row of att is used to hold the scores before they are exponentiated.
// bytes: att written (4 B NH T T), q and k read once (8 B NH T HS).
// flops: the dot products (2 HS per pair, T (T + 1) / 2 pairs per head) and the softmax
// (4 per kept pair).
__global__ void attention_softmax_rows(float* att, const float* q, const float* k,
                                       int B, int NH, int T, int HS) {
    const int idx = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (idx < B * NH * T) {
        int t = idx % T;
        int bh = idx / T;
        const float* qt = q + (size_t)idx * HS;
        const float* kb = k + (size_t)bh * T * HS;
        float* row = att + (size_t)idx * T;
        float scale = 1.0f / sqrtf((float)HS);

        float maxval = -INFINITY;
        __shared__ float keys[256 / 32][32][32 + 1];
        for (int t0 = 0; t0 <= t; t0 += 32) {
            float dot = 0.0f;
            for (int i0 = 0; i0 < HS; i0 += 32) {
                float kv[32];
                #pragma unroll
                for (int kj = 0; kj < 32; kj++) {
                    const int t2 = t0 + kj;
                    #pragma unroll
                    for (int kd = 0; kd < 32 / 32; kd++) {
                        const int i = i0 + kd * 32 + lane;
                        const float* kt = kb + (size_t)t2 * HS;
                        kv[kj * (32 / 32) + kd] = (t2 <= t && i < HS) ? kt[i] : 0.0f;
                    }
                }
                __syncwarp();
                #pragma unroll
                for (int kj = 0; kj < 32; kj++) {
                    #pragma unroll
                    for (int kd = 0; kd < 32 / 32; kd++) {
                        keys[threadIdx.x / 32][kj][kd * 32 + lane] = kv[kj * (32 / 32) + kd];
                    }
                }
                __syncwarp();
                for (int i = i0; i < i0 + 32 && i < HS; i++) {
                    dot += qt[i] * keys[threadIdx.x / 32][lane][i - i0];
                }
            }
            const int t2 = t0 + lane;
            if (t2 <= t) {
                const float* kt = kb + (size_t)t2 * HS;
                dot *= scale;
                maxval = fmaxf(maxval, dot);
                row[t2] = dot;
            }
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            maxval = fmaxf(maxval, __shfl_xor_sync(0xffffffffu, maxval, offset));
        }
        float sum = 0.0f;
        for (int t2 = lane; t2 <= t; t2 += 32) {
            float e = expf(row[t2] - maxval);
            row[t2] = e;
            sum += e;
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        }
        float inv = 1.0f / sum;
        for (int t2 = lane; t2 < T; t2 += 32) {
            row[t2] = t2 <= t ? row[t2] * inv : 0.0f;
        }
    }
}

/* klc-spec
kernel: attention_value_tile
sizes: {BH: 64, T: 1024, HS: 64}
verify_sizes:
  - {BH: 2, T: 128, HS: 64}
  - {BH: 3, T: 37, HS: 24}
  - {BH: 1, T: 2, HS: 3}
  - {BH: 2, T: 150, HS: 72}
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
// Weighted sum of values under causal attention: for head bh, query t, channel i,
//   out[bh, t, i] = sum over t2 <= t of att[bh, t, t2] * v[bh, t2, i]
// (entries of att above the diagonal are never read). The expert of the
// attention_value_tile lineage: a batched lower-triangular product, tiled, in the 1-D launch
// of a thread per output (README.md names the pass that removes it):
//   - the block (GY x GX threads along x) is a (GY * RM) x (GX * RN) tile of one head's
//     output (queries x channels), each thread RM x RN of it (rows ty * RM + r, columns
//     tx * RN + c); the block walks the tiles of all heads with a block-stride loop, so
//     that any grid covers them (the launch stays the thread-per-output one);
//   - the keys are walked TK at a time, only up to the tile's last query (causal): the
//     block copies the (GY * RM) x TK slice of att (zero above the diagonal and past the
//     last query, which are never read) and the TK x (GX * RN) slice of v into shared
//     memory, waits, and every thread adds its RM x RN products from registers; a step
//     wholly below the diagonal adds every product, the others only those of keys at or
//     below the row's query;
//   - every element is addressed as the first version addresses it: a block that sets the
//     thread-per-output index of the element (idx, then i, t, bh from it with / and %) and
//     the row pointers, so the tiles read exactly what a thread per output reads, and each
//     output adds the same products in the same order;
//   - a step's copy first loads all of the thread's elements of both slices into registers
//     (unrolled loops: the loads are in flight together, and the unpacking of each
//     element's index does not change from step to step), then stores them; the att slice
//     is stored transposed, its rows padded by 4 floats: a warp's copy (4 queries x 8
//     consecutive keys) writes 32 different banks.
// bytes: the lower triangle of att, v read and out written. flops: a multiply-add per
// (t2 <= t, i).
#define GY 16
#define GX 16
#define RM 8
#define RN 4
#define TK 8
#define THREADS 256

__global__ void 
attention_value_tile(float* out, const float* att,
                     const float* v, int BH, int T, int HS) {
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

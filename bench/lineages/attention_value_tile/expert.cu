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

__global__ void __launch_bounds__(THREADS)
attention_value_tile(float* __restrict__ out, const float* __restrict__ att,
                     const float* __restrict__ v, int BH, int T, int HS) {
    __shared__ float as[TK][GY * RM + 4];
    __shared__ float vs[TK][GX * RN];
    const int ty = threadIdx.x / GX;
    const int tx = threadIdx.x % GX;
    const int ntt = (T + GY * RM - 1) / (GY * RM);
    const int nti = (HS + GX * RN - 1) / (GX * RN);
    for (int tile = blockIdx.x; tile < BH * ntt * nti; tile += gridDim.x) {
        const int i0 = tile % nti * (GX * RN);
        const int t0 = tile / nti % ntt * (GY * RM);
        const int b0 = tile / (nti * ntt);
        float sums[RM][RN];
        for (int ri = 0; ri < RM; ri++) {
            for (int ci = 0; ci < RN; ci++) {
                sums[ri][ci] = 0.0f;
            }
        }
        for (int k0 = 0; k0 < T && k0 < t0 + GY * RM; k0 += TK) {
            float la[(TK * GY * RM + THREADS - 1) / THREADS];
            float lv[(TK * GX * RN + THREADS - 1) / THREADS];
            #pragma unroll
            for (int lj = 0; lj < (TK * GY * RM + THREADS - 1) / THREADS; lj++) {
                const int ei = threadIdx.x + lj * THREADS;
                const int idx = (b0 * T + t0 + ei / TK) * HS;
                int i = idx % HS;
                int t = (idx / HS) % T;
                int bh = idx / (HS * T);
                const float* att_row = att + ((size_t)bh * T + t) * T;
                const float* vb = v + (size_t)bh * T * HS;
                const int t2 = k0 + ei % TK;
                la[lj] = (ei < TK * GY * RM && t0 + ei / TK < T && t2 <= t) ? att_row[t2] : 0.0f;
            }
            #pragma unroll
            for (int lj = 0; lj < (TK * GX * RN + THREADS - 1) / THREADS; lj++) {
                const int ei = threadIdx.x + lj * THREADS;
                const int idx = (b0 * T + t0) * HS + i0 + ei % (GX * RN);
                int i = idx % HS;
                int t = (idx / HS) % T;
                int bh = idx / (HS * T);
                const float* att_row = att + ((size_t)bh * T + t) * T;
                const float* vb = v + (size_t)bh * T * HS;
                const int t2 = k0 + ei / (GX * RN);
                lv[lj] = (ei < TK * GX * RN && t2 < T && i0 + ei % (GX * RN) < HS) ? vb[t2 * HS + i] : 0.0f;
            }
            #pragma unroll
            for (int lj = 0; lj < (TK * GY * RM + THREADS - 1) / THREADS; lj++) {
                const int ei = threadIdx.x + lj * THREADS;
                if (ei < TK * GY * RM) {
                    as[ei % TK][ei / TK] = la[lj];
                }
            }
            #pragma unroll
            for (int lj = 0; lj < (TK * GX * RN + THREADS - 1) / THREADS; lj++) {
                const int ei = threadIdx.x + lj * THREADS;
                if (ei < TK * GX * RN) {
                    vs[ei / (GX * RN)][ei % (GX * RN)] = lv[lj];
                }
            }
            __syncthreads();
            if (k0 + TK <= t0 + 1) {
                for (int kk = 0; kk < TK; kk++) {
                    float ra[RM];
                    float rb[RN];
                    for (int ri = 0; ri < RM; ri++) {
                        ra[ri] = as[kk][ty * RM + ri];
                    }
                    for (int ci = 0; ci < RN; ci++) {
                        rb[ci] = vs[kk][tx * RN + ci];
                    }
                    for (int ri = 0; ri < RM; ri++) {
                        for (int ci = 0; ci < RN; ci++) {
                            sums[ri][ci] += ra[ri] * rb[ci];
                        }
                    }
                }
            } else {
                for (int kk = 0; kk < TK; kk++) {
                    float ra[RM];
                    float rb[RN];
                    for (int ri = 0; ri < RM; ri++) {
                        ra[ri] = as[kk][ty * RM + ri];
                    }
                    for (int ci = 0; ci < RN; ci++) {
                        rb[ci] = vs[kk][tx * RN + ci];
                    }
                    for (int ri = 0; ri < RM; ri++) {
                        for (int ci = 0; ci < RN; ci++) {
                            if (k0 + kk <= t0 + ty * RM + ri) {
                                sums[ri][ci] += ra[ri] * rb[ci];
                            }
                        }
                    }
                }
            }
            __syncthreads();
        }
        for (int ri = 0; ri < RM; ri++) {
            for (int ci = 0; ci < RN; ci++) {
                if (t0 + ty * RM + ri < T && i0 + tx * RN + ci < HS) {
                    const int idx = (b0 * T + t0 + ty * RM + ri) * HS + i0 + tx * RN + ci;
                    int i = idx % HS;
                    int t = (idx / HS) % T;
                    int bh = idx / (HS * T);
                    const float* att_row = att + ((size_t)bh * T + t) * T;
                    const float* vb = v + (size_t)bh * T * HS;
                    float acc = sums[ri][ci];
                    out[idx] = acc;
                }
            }
        }
    }
}

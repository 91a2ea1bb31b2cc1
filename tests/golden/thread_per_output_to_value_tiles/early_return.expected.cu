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
    __shared__ float as[8][16 * 8 + 4];
    __shared__ float vs[8][16 * 4];
    const int ty = threadIdx.x / 16;
    const int tx = threadIdx.x % 16;
    const int ntt = (T + 16 * 8 - 1) / (16 * 8);
    const int nti = (HS + 16 * 4 - 1) / (16 * 4);
    for (int tile = blockIdx.x; tile < BH * ntt * nti; tile += gridDim.x) {
        const int i0 = tile % nti * (16 * 4);
        const int t0 = tile / nti % ntt * (16 * 8);
        const int b0 = tile / (nti * ntt);
        float sums[8][4];
        for (int ri = 0; ri < 8; ri++) {
            for (int ci = 0; ci < 4; ci++) {
                sums[ri][ci] = 0.0f;
            }
        }
        for (int k0 = 0; k0 < T && k0 < t0 + 16 * 8; k0 += 8) {
            float la[(8 * 16 * 8 + 256 - 1) / 256];
            float lv[(8 * 16 * 4 + 256 - 1) / 256];
            #pragma unroll
            for (int lj = 0; lj < (8 * 16 * 8 + 256 - 1) / 256; lj++) {
                const int ei = threadIdx.x + lj * 256;
                const int idx = (b0 * T + t0 + ei / 8) * HS;
                int i = idx % HS;
                int t = (idx / HS) % T;
                int bh = idx / (HS * T);
                const int t2 = k0 + ei % 8;
                la[lj] = (ei < 8 * 16 * 8 && t0 + ei / 8 < T && t2 <= t) ? att[(bh * T + t) * T + t2] : 0.0f;
            }
            #pragma unroll
            for (int lj = 0; lj < (8 * 16 * 4 + 256 - 1) / 256; lj++) {
                const int ei = threadIdx.x + lj * 256;
                const int idx = (b0 * T + t0) * HS + i0 + ei % (16 * 4);
                int i = idx % HS;
                int t = (idx / HS) % T;
                int bh = idx / (HS * T);
                const int t2 = k0 + ei / (16 * 4);
                lv[lj] = (ei < 8 * 16 * 4 && t2 < T && i0 + ei % (16 * 4) < HS) ? v[(bh * T + t2) * HS + i] : 0.0f;
            }
            #pragma unroll
            for (int lj = 0; lj < (8 * 16 * 8 + 256 - 1) / 256; lj++) {
                const int ei = threadIdx.x + lj * 256;
                if (ei < 8 * 16 * 8) {
                    as[ei % 8][ei / 8] = la[lj];
                }
            }
            #pragma unroll
            for (int lj = 0; lj < (8 * 16 * 4 + 256 - 1) / 256; lj++) {
                const int ei = threadIdx.x + lj * 256;
                if (ei < 8 * 16 * 4) {
                    vs[ei / (16 * 4)][ei % (16 * 4)] = lv[lj];
                }
            }
            __syncthreads();
            if (k0 + 8 <= t0 + 1) {
                for (int kk = 0; kk < 8; kk++) {
                    float ra[8];
                    float rb[4];
                    for (int ri = 0; ri < 8; ri++) {
                        ra[ri] = as[kk][ty * 8 + ri];
                    }
                    for (int ci = 0; ci < 4; ci++) {
                        rb[ci] = vs[kk][tx * 4 + ci];
                    }
                    for (int ri = 0; ri < 8; ri++) {
                        for (int ci = 0; ci < 4; ci++) {
                            sums[ri][ci] += ra[ri] * rb[ci];
                        }
                    }
                }
            } else {
                for (int kk = 0; kk < 8; kk++) {
                    float ra[8];
                    float rb[4];
                    for (int ri = 0; ri < 8; ri++) {
                        ra[ri] = as[kk][ty * 8 + ri];
                    }
                    for (int ci = 0; ci < 4; ci++) {
                        rb[ci] = vs[kk][tx * 4 + ci];
                    }
                    for (int ri = 0; ri < 8; ri++) {
                        for (int ci = 0; ci < 4; ci++) {
                            if (k0 + kk <= t0 + ty * 8 + ri) {
                                sums[ri][ci] += ra[ri] * rb[ci];
                            }
                        }
                    }
                }
            }
            __syncthreads();
        }
        for (int ri = 0; ri < 8; ri++) {
            for (int ci = 0; ci < 4; ci++) {
                if (t0 + ty * 8 + ri < T && i0 + tx * 4 + ci < HS) {
                    const int idx = (b0 * T + t0 + ty * 8 + ri) * HS + i0 + tx * 4 + ci;
                    int i = idx % HS;
                    int t = (idx / HS) % T;
                    int bh = idx / (HS * T);
                    float acc = sums[ri][ci];
                    out[idx] = acc;
                }
            }
        }
    }
}

/* klc-spec
kernel: scale_mask_softmax
sizes: {BH: 64, T: 1024}
verify_sizes:
  - {BH: 2, T: 256}
  - {BH: 3, T: 37}
  - {BH: 1, T: 2}
args:
  - {name: att, shape: [BH, T, T], role: inout, init: "normal(0, 4)"}
  - {name: BH, value: BH}
  - {name: T, value: T}
  - {name: scale, value: 0.125}
grid: [BH, T]
block: [128]
# spec fix 2026-11-25: the masked entries (t2 > t) are never needed, only written:
# the lower triangle read (4 BH T (T + 1) / 2) plus att written (4 BH T T)
bytes: 2 * BH * T * (T + 1) + 4 * BH * T * T
flops: 5 * BH * T * T
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// family: attention
// style: block per row on a 2D grid (blockIdx.x head, blockIdx.y query), in place, -INFINITY for masked entries, #define block size, shared-memory tree, fmaxf
// In-place scaled, causally masked softmax of attention scores (BH, T, T): for row t,
//   att[t, t2] = softmax over t2 of (scale * att[t, t2], or -inf where t2 > t),
// so that entries above the diagonal become 0. One block of NT threads per row.
// bytes: att read and written (8 BH T T). flops: 5 per element (expf not counted).
#define NT 128

__global__ void scale_mask_softmax(float* att, int BH, int T, float scale) {
    __shared__ float red[NT];
    int bh = blockIdx.x;
    int t = blockIdx.y;
    int tid = threadIdx.x;
    float* row = att + ((size_t)bh * T + t) * T;

    float m = -INFINITY;
    for (int j = tid; j < T; j += NT) {
        float s = j <= t ? row[j] * scale : -INFINITY;
        m = fmaxf(m, s);
    }
    red[tid] = m;
    __syncthreads();
    for (int s = NT / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();

    float sum = 0.0f;
    for (int j = tid; j < T; j += NT) {
        float s = j <= t ? row[j] * scale : -INFINITY;
        sum += expf(s - m);
    }
    red[tid] = sum;
    __syncthreads();
    for (int s = NT / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    float inv = 1.0f / red[0];
    __syncthreads();

    for (int j = tid; j < T; j += NT) {
        float s = j <= t ? row[j] * scale : -INFINITY;
        row[j] = expf(s - m) * inv;
    }
}

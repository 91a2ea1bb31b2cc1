/* klc-spec
kernel: embedding_scaled
sizes: {n_tokens: 32768, dim: 2048, vocab: 32768}
verify_sizes:
  - {n_tokens: 512, dim: 256, vocab: 300}
  - {n_tokens: 77, dim: 99, vocab: 13}
  - {n_tokens: 2, dim: 3, vocab: 5}
args:
  - {name: table, shape: [vocab, dim], role: in, init: normal}
  - {name: ids, shape: [n_tokens], role: in, init: "randint(0, vocab)"}
  - {name: out, shape: [n_tokens, dim], role: out}
  - {name: n_tokens, value: n_tokens}
  - {name: dim, value: dim}
grid: ["ceil_div(n_tokens, 128)"]
block: [128]
bytes: 4 * n_tokens * dim + 4 * n_tokens + 4 * dim * min(vocab, n_tokens) // 2
flops: n_tokens * dim
timeout_s: 120
*/
// family: gather
// style: thread per token (a whole row per thread), long row offsets, T *x spacing, sqrtf of the width as a scale
// Scaled embedding lookup: out[n, :] = table[ids[n], :] * sqrt(dim).
// bytes: out written (4 n dim), ids read, and the table rows used: at least half of
// min(vocab, n_tokens) distinct rows for random ids, counted as half. flops: a multiply each.
__global__ void embedding_scaled(const float *table, const int *ids, float *out, int n_tokens,
                                 int dim) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n < n_tokens) {
        long id = ids[n];
        const float *src = table + id * dim;
        float *dst = out + (long)n * dim;
        float s = sqrtf((float)dim);
        for (int d = 0; d < dim; d++) {
            dst[d] = src[d] * s;
        }
    }
}

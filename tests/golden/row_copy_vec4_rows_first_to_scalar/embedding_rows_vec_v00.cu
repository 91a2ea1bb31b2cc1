/* klc-spec
kernel: embedding_rows_vec
sizes: {n_tok: 32768, dim: 1024, vocab: 50000}
verify_sizes:
  - {n_tok: 300, dim: 256, vocab: 97}
  - {n_tok: 77, dim: 101, vocab: 13}
  - {n_tok: 3, dim: 6, vocab: 5}
args:
  - {name: out, shape: [n_tok, dim], role: out}
  - {name: table, shape: [vocab, dim], role: in, init: normal}
  - {name: ids, shape: [n_tok], role: in, init: "randint(0, vocab)"}
  - {name: n_tok, value: n_tok}
  - {name: dim, value: dim}
grid: ["ceil_div(dim, 256)", "ceil_div(n_tok, 4)"]
block: [32, 4]
bytes: 4 * n_tok * dim + 4 * n_tok + 4 * dim * min(vocab, n_tok) // 2
flops: 0
*/
// Token embedding lookup: out[n, :] = table[ids[n], :], row-major float rows of `dim`
// elements. The expert of the embedding_rows_vec lineage, in the spelling that declares the
// row (the token, from the y indices) before the column: a 2-D launch of 32 x 4 blocks in
// which every thread copies two groups of four consecutive columns of its token's row
// (16 bytes each), a block's width of groups apart:
//   - one 128-bit access for each group (a uint4 load and store: the bytes as they are)
//     where both addresses are 16-byte aligned and the four columns are in the row;
//     elsewhere (a ragged row end, rows that start unaligned) the columns one by one;
//   - an eighth of the threads along x (the grid's x extent counts columns / 256).
__global__ void embedding_rows_vec(float* out, const float* table, const int* ids, int n_tok,
                                   int dim) {
    int n = blockIdx.y * blockDim.y + threadIdx.y;
    int d0 = (blockIdx.x * blockDim.x * 2 + threadIdx.x) * 4;
    #pragma unroll
    for (int v = 0; v < 2; ++v) {
        int d = d0 + v * blockDim.x * 4;
        if (n < n_tok && d < dim) {
            int id = ids[n];
            if (d + 4 <= dim
                && ((reinterpret_cast<unsigned long long>(&out[(size_t)n * dim + d])
                     | reinterpret_cast<unsigned long long>(&table[(size_t)id * dim + d])) & 15) == 0) {
                *reinterpret_cast<uint4*>(&out[(size_t)n * dim + d]) =
                    *reinterpret_cast<const uint4*>(&table[(size_t)id * dim + d]);
            } else {
                for (int k = 0; k < 4 && d + k < dim; ++k) {
                    out[(size_t)n * dim + d + k] = table[(size_t)id * dim + d + k];
                }
            }
        }
    }
}

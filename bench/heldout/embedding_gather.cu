/* klc-spec
kernel: embedding_gather
sizes: {tokens: 16384, vocab: 131072, dim: 1024}
verify_sizes:
  - {tokens: 256, vocab: 1000, dim: 256}
  - {tokens: 301, vocab: 77, dim: 100}
  - {tokens: 3, vocab: 5, dim: 3}
args:
  - {name: ids, shape: [tokens], role: in, init: "randint(0, vocab)"}
  - {name: table, shape: [vocab, dim], role: in, init: normal}
  - {name: out, shape: [tokens, dim], role: out}
  - {name: tokens, value: tokens}
  - {name: dim, value: dim}
grid: ["ceil_div(tokens * dim, 256)"]
block: [256]
bytes: 8 * tokens * dim + 4 * tokens
flops: 0
*/
// Embedding lookup: out[t, :] = table[ids[t], :] for a row-major vocab x dim table and
// tokens ids in [0, vocab). One output element per thread over the flattened output.
// bytes: the gathered rows read once and out written once (8 * tokens * dim), ids read
// (4 * tokens). The rest of the table is never touched. With random ids a row can repeat
// and be read once for two tokens; at tokens / vocab = 1/8 about 6% of the ids repeat, so
// the true minimum is a few percent under this count. flops: none (a copy).
__global__ void embedding_gather(const int* ids, const float* table, float* out, int tokens,
                                 int dim) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < tokens * dim) {
        int t = i / dim;
        int c = i % dim;
        out[i] = table[ids[t] * dim + c];
    }
}

// Byte rows (a mask or an 8-bit image row gather): sixteen to a 16-byte group.

__global__ void embed_lookup(unsigned char *__restrict__ out, const unsigned char *__restrict__ table,
                             const int *__restrict__ ids, int n_tok, int dim) {
    int col0 = (blockIdx.x * blockDim.x * 2 + threadIdx.x) * 16;
    int n = blockIdx.y * blockDim.y + threadIdx.y;
    #pragma unroll
    for (int v = 0; v < 2; ++v) {
        int d = col0 + v * blockDim.x * 16;
        if (n < n_tok && d < dim) {
            int id = ids[n];
            if (d + 16 <= dim
                && ((reinterpret_cast<unsigned long long>(&out[(size_t)n * dim + d])
                     | reinterpret_cast<unsigned long long>(&table[(size_t)id * dim + d])) & 15) == 0) {
                *reinterpret_cast<uint4*>(&out[(size_t)n * dim + d]) =
                    *reinterpret_cast<const uint4*>(&table[(size_t)id * dim + d]);
            } else {
                for (int k = 0; k < 16 && d + k < dim; ++k) {
                    out[(size_t)n * dim + d + k] = table[(size_t)id * dim + d + k];
                }
            }
        }
    }
}

void embed(unsigned char *out, const unsigned char *table, const int *ids, int n_tok, int dim) {
    dim3 threads(64, 4);
    dim3 blocks((dim + 2047) / 2048, (n_tok + 3) / 4);
    embed_lookup<<<blocks, threads>>>(out, table, ids, n_tok, dim);
}

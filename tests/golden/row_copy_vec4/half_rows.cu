// Half-precision rows: eight to a 16-byte group (?w = 8 from the element size).
#include <cuda_fp16.h>

__global__ void embed_lookup(__half *__restrict__ out, const __half *__restrict__ table,
                             const int *__restrict__ ids, int n_tok, int dim) {
    int d = threadIdx.x + blockIdx.x * blockDim.x;
    int n = threadIdx.y + blockIdx.y * blockDim.y;
    if (n < n_tok && d < dim) {
        int id = ids[n];
        out[(size_t)n * dim + d] = table[(size_t)id * dim + d];
    }
}

void embed(__half *out, const __half *table, const int *ids, int n_tok, int dim) {
    dim3 threads(64, 4);
    dim3 blocks((dim + 63) / 64, (n_tok + 3) / 4);
    embed_lookup<<<blocks, threads>>>(out, table, ids, n_tok, dim);
}

// A token embedding on a 2-D launch: x over the channels, y over the tokens, the launch in a
// host function with dim3 variables (64 x 4 threads).
#include <cuda_runtime.h>

__global__ void embed_lookup(float *__restrict__ out, const float *__restrict__ table,
                             const int *__restrict__ ids, int n_tok, int dim) {
    int d = threadIdx.x + blockIdx.x * blockDim.x;
    int n = threadIdx.y + blockIdx.y * blockDim.y;
    if (n < n_tok && d < dim) {
        int id = ids[n];
        out[(size_t)n * dim + d] = table[(size_t)id * dim + d];
    }
}

void embed(float *out, const float *table, const int *ids, int n_tok, int dim) {
    dim3 threads(64, 4);
    dim3 blocks((dim + 63) / 64, (n_tok + 3) / 4);
    embed_lookup<<<blocks, threads>>>(out, table, ids, n_tok, dim);
}

// A token embedding on a 2-D launch, the token (y) declared before the channel (x), the
// launch in a host function with dim3 variables (64 x 4 threads).
#include <cuda_runtime.h>

__global__ void embed_lookup(float *__restrict__ out, const float *__restrict__ table,
                             const int *__restrict__ ids, int n_tok, int dim) {
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

void embed(float *out, const float *table, const int *ids, int n_tok, int dim) {
    dim3 threads(64, 4);
    dim3 blocks((dim + 511) / 512, (n_tok + 3) / 4);
    embed_lookup<<<blocks, threads>>>(out, table, ids, n_tok, dim);
}

// Half-precision rows: eight to a 16-byte group (?w = 8 from the element size).
#include <cuda_fp16.h>

__global__ void embed_lookup(__half *__restrict__ out, const __half *__restrict__ table,
                             const int *__restrict__ ids, int n_tok, int dim) {
    int col0 = (blockIdx.x * blockDim.x * 2 + threadIdx.x) * 8;
    int n = blockIdx.y * blockDim.y + threadIdx.y;
    #pragma unroll
    for (int v = 0; v < 2; ++v) {
        int d = col0 + v * blockDim.x * 8;
        if (n < n_tok && d < dim) {
            int id = ids[n];
            if (d + 8 <= dim
                && ((reinterpret_cast<unsigned long long>(&out[(size_t)n * dim + d])
                     | reinterpret_cast<unsigned long long>(&table[(size_t)id * dim + d])) & 15) == 0) {
                *reinterpret_cast<uint4*>(&out[(size_t)n * dim + d]) =
                    *reinterpret_cast<const uint4*>(&table[(size_t)id * dim + d]);
            } else {
                for (int k = 0; k < 8 && d + k < dim; ++k) {
                    out[(size_t)n * dim + d + k] = table[(size_t)id * dim + d + k];
                }
            }
        }
    }
}

void embed(__half *out, const __half *table, const int *ids, int n_tok, int dim) {
    dim3 threads(64, 4);
    dim3 blocks((dim + 1023) / 1024, (n_tok + 3) / 4);
    embed_lookup<<<blocks, threads>>>(out, table, ids, n_tok, dim);
}

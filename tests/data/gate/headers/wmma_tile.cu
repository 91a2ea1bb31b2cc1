// One 16x16x16 tensor-core product per warp through nvcuda::wmma (mma.h).
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

__global__ void wmma_16x16(const half* __restrict__ a, const half* __restrict__ b,
                           float* __restrict__ c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

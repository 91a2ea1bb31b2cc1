// Kernels whose #if/#else branches split braces, as in real multi-arch code.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>

using namespace nvcuda;

#if __CUDA_ARCH__ >= 800
__global__ void __launch_bounds__(128) axpy_arch(const __nv_bfloat16 *x, __nv_bfloat16 *y, float a, int n) {
#else
__global__ void __launch_bounds__(128) axpy_arch(const __half *x, __half *y, float a, int n) {
#endif
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
#if __CUDA_ARCH__ >= 800
    y[i] = __float2bfloat16(a * __bfloat162float(x[i]) + __bfloat162float(y[i]));
#else
    y[i] = __float2half(a * __half2float(x[i]) + __half2float(y[i]));
#endif
  }
}

__global__ void wmma_tile_kernel(const half *a, const half *b, float *c, int M, int N, int K) {
  int warpM = (blockIdx.x * blockDim.x + threadIdx.x) / warpSize;
  int warpN = blockIdx.y * blockDim.y + threadIdx.y;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a_frag;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b_frag;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc_frag;
  wmma::fill_fragment(acc_frag, 0.0f);
  for (int i = 0; i < K; i += 16) {
    int aRow = warpM * 16, bCol = warpN * 16;
    if (aRow < M && bCol < N) {
      wmma::load_matrix_sync(a_frag, a + aRow * K + i, K);
      wmma::load_matrix_sync(b_frag, b + bCol * K + i, K);
      wmma::mma_sync(acc_frag, a_frag, b_frag, acc_frag);
    }
  }
  if (warpM * 16 < M && warpN * 16 < N)
    wmma::store_matrix_sync(c + warpM * 16 * N + warpN * 16, acc_frag, N, wmma::mem_row_major);
#else
  (void)a; (void)b; (void)c; (void)M; (void)N; (void)K; (void)warpM; (void)warpN;
  __trap();
#endif
}

__global__ void split_loop_kernel(float *out, const float *in, int n) {
  int tid = threadIdx.x + blockIdx.x * blockDim.x;
#if __CUDA_ARCH__ >= 900
  for (int i = tid; i < n; i += gridDim.x * blockDim.x) {
    out[i] = __ldg(in + i) * 2.0f;
#else
  for (int i = tid; i < n; i += blockDim.x * gridDim.x) {
    out[i] = in[i] * 2.0f;
#endif
  }
}

template <typename T>
__global__ void reduce_arch(const T *in, T *out, int n)
{
  T sum = T(0);
  for (int i = threadIdx.x; i < n; i += blockDim.x) sum += in[i];
#if __CUDA_ARCH__ >= 800
  sum = __reduce_add_sync(0xffffffff, sum);
  if (threadIdx.x % 32 == 0) {
    atomicAdd(out, sum);
  }
#else
  for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffff, sum, o);
  if (threadIdx.x % 32 == 0) {
    atomicAdd(out, sum);
  }
#endif
}

#ifdef USE_FAST_PATH
__global__ void fast_or_slow(float *p, int n) {
  int i = threadIdx.x;
  if (i < n) {
    p[i] = __expf(p[i]);
#else
__global__ void fast_or_slow(float *p, int n) {
  int i = threadIdx.x;
  if (i < n) {
    p[i] = expf(p[i]);
#endif
  }
}

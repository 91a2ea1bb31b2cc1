// Code that compiles for CUDA and HIP: #ifdef branches around signatures and loops.
#ifdef USE_ROCM
#include <hip/hip_runtime.h>
#define WARP_SZ 64
#define SHFL_DOWN(v, o) __shfl_down(v, o)
#else
#include <cuda_runtime.h>
#define WARP_SZ 32
#define SHFL_DOWN(v, o) __shfl_down_sync(0xffffffffu, v, o)
#endif

#if defined(USE_ROCM)
__global__ void __launch_bounds__(512) warp_sum_rows(const float *in, float *out, int cols) {
#else
__global__ void __launch_bounds__(1024) warp_sum_rows(const float *in, float *out, int cols) {
#endif
  const float *row = in + blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += WARP_SZ) s += row[c];
  for (int o = WARP_SZ / 2; o > 0; o >>= 1) s += SHFL_DOWN(s, o);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

__global__ void hip_or_cuda_copy(const int *src, int *dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifndef USE_ROCM
  if (i < n) {
    dst[i] = __ldg(src + i);
  }
#else
  if (i < n) {
    dst[i] = src[i];
  }
#endif
}

#if 0
__global__ void disabled_kernel(int *p) {
  p[0] = 1;
#else
__global__ void enabled_kernel(int *p) {
  p[0] = 2;
#endif
}

__global__ void elif_chain(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if __CUDA_ARCH__ >= 900
  if (i < n) { x[i] = __fsqrt_rn(x[i]);
#elif __CUDA_ARCH__ >= 800
  if (i < n) { x[i] = sqrtf(x[i]);
#else
  if (i < n) { x[i] = (float)sqrt((double)x[i]);
#endif
  }
}

// Macros that expand to kernels and file-scope macro calls without semicolons.
#include <cuda_runtime.h>
#include <cstdint>

#define DEFINE_UNARY_KERNEL(name, expr)                                         \
  __global__ void name##_kernel(const float *__restrict__ in,                  \
                                float *__restrict__ out, int n) {             \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                            \
    if (i < n) {                                                              \
      float x = in[i];                                                        \
      out[i] = (expr);                                                        \
    }                                                                         \
  }

DEFINE_UNARY_KERNEL(square, x * x)
DEFINE_UNARY_KERNEL(cube, x * x * x)
DEFINE_UNARY_KERNEL(recip, 1.0f / x)

#define INSTANTIATE_AXPY(T) \
  template __global__ void axpy_kernel<T>(T, const T *, T *, int);

template <typename T>
__global__ void axpy_kernel(T a, const T *x, T *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

INSTANTIATE_AXPY(float)
INSTANTIATE_AXPY(double)
REGISTER_KERNEL_FAMILY(axpy, "axpy for float and double")

#define KLC_DEVICE_INLINE __device__ __forceinline__
#define GRID_STRIDE_LOOP(i, n) \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); i += (int64_t)blockDim.x * gridDim.x)

KLC_DEVICE_INLINE float softplus(float x) { return x > 20.f ? x : log1pf(expf(x)); }

__global__ void softplus_kernel(const float *in, float *out, int64_t n) {
  GRID_STRIDE_LOOP(i, n) {
    out[i] = softplus(in[i]);
  }
}

__global__ void counted_kernel(unsigned long long *counter, int iters) {
  KERNEL_PROLOGUE
  for (int it = 0; it < iters; ++it) {
    atomicAdd(counter, 1ULL);
  }
  KERNEL_EPILOGUE(counter)
}

#define SWITCH_BLOCK(n, ...) \
  switch (n) { case 128: { constexpr int kBlock = 128; __VA_ARGS__(); break; } \
               default:  { constexpr int kBlock = 256; __VA_ARGS__(); break; } }

template <int kBlock>
__global__ void blocked_fill(int *p, int v) { p[blockIdx.x * kBlock + threadIdx.x] = v; }

void launch_blocked(int *p, int n, int block) {
  SWITCH_BLOCK(block, [&] { blocked_fill<kBlock><<<n / kBlock, kBlock>>>(p, 7); })
}

DECLARE_KERNEL_STATS(counted_kernel)

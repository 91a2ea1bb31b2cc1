// Host code launching kernels in every syntax: templates, dim3, streams, macros.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
  do {                                                                          \
    cudaError_t err__ = (call);                                                 \
    if (err__ != cudaSuccess) {                                                 \
      fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err__),    \
              __FILE__, __LINE__);                                              \
      std::exit(EXIT_FAILURE);                                                  \
    }                                                                           \
  } while (0)

template <typename T, int BLOCK>
__global__ void iota_kernel(T *out, T start, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) out[i] = start + T(i);
}

template <typename T>
__global__ void add_kernel(const T *a, const T *b, T *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void matrix_init(float *m, int rows, int cols, float v) {
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows && c < cols) m[r * cols + c] = v;
}

namespace ops {
__global__ void negate(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = -x[i];
}
}  // namespace ops

static inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

int run(int n) {
  float *a, *b, *c;
  CUDA_CHECK(cudaMalloc(&a, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&b, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&c, n * sizeof(float)));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));

  iota_kernel<float, 256><<<ceil_div(n, 256), 256>>>(a, 0.f, n);
  iota_kernel<float, 128><<<ceil_div(n, 128), 128, 0, s>>>(b, 1.f, n);
  add_kernel<<<ceil_div(n, 512), 512, 0, s>>>(a, b, c, n);
  add_kernel<float><<<dim3(ceil_div(n, 256)), dim3(256), /*smem=*/0, /*stream=*/s>>>(a, b, c, n);
  dim3 block(16, 16);
  dim3 grid(ceil_div(64, block.x), ceil_div(64, block.y));
  matrix_init<<<grid, block>>>(c, 64, 64, 3.f);
  ops::negate<<<(n + 255) / 256, 256>>>(c, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(s));

  void (*kernel_ptr)(float *, int) = ops::negate;
  kernel_ptr<<<1, 32>>>(c, 32);

  auto launch = [&](int blocks) {
    add_kernel<float><<<blocks, 128>>>(a, b, c, blocks * 128);
  };
  launch(4);

  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}

int main() { return run(1 << 20); }

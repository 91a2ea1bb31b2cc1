// C++17/20 features in device code: if constexpr, attributes, auto, structured bindings.
#include <cuda_runtime.h>
#include <cuda/std/type_traits>
#include <cuda/std/array>

template <typename T>
concept Arithmetic = cuda::std::is_arithmetic_v<T>;

template <typename T, int N>
__device__ __noinline__ T dot_n(const T (&a)[N], const T (&b)[N]) {
  T s{};
#pragma unroll
  for (int i = 0; i < N; ++i) s += a[i] * b[i];
  return s;
}

template <typename T, bool kClamp>
__global__ void if_constexpr_kernel(T *__restrict__ data, int n, T lo, T hi) {
  const auto i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) [[unlikely]] return;
  auto v = data[i];
  if constexpr (kClamp) {
    v = v < lo ? lo : (v > hi ? hi : v);
  } else {
    v = v * T(2);
  }
  data[i] = v;
}

__global__ void range_for_kernel(int *out) {
  cuda::std::array<int, 4> arr{1, 2, 3, 4};
  int s = 0;
  for (auto x : arr) s += x;
  for (const auto &x : arr) s -= x / 2;
  out[threadIdx.x] = s;
}

__global__ void structured_binding_kernel(const int2 *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const auto [a, b] = cuda::std::pair<int, int>{in[i].x, in[i].y};
    out[i] = a * b;
  }
}

template <typename... Ts>
__global__ void variadic_kernel(int *out, Ts... args) {
  out[threadIdx.x] = (0 + ... + static_cast<int>(args));
}

struct Functor {
  float k;
  __device__ float operator()(float x) const { return k * x; }
};

template <typename F>
__global__ void __launch_bounds__(256, 2) map_kernel(F f, const float *__restrict__ in, float *__restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = f(in[i]);
}

__global__ void grid_constant_kernel(const __grid_constant__ Functor f, float *x) { x[threadIdx.x] = f(x[threadIdx.x]); }

void launch_modern(int *o, float *x, int n) {
  if_constexpr_kernel<float, true><<<(n + 255) / 256, 256>>>(x, n, 0.f, 1.f);
  variadic_kernel<int, short, long><<<1, 32>>>(o, 1, short(2), 3L);
  map_kernel<<<(n + 255) / 256, 256>>>(Functor{2.f}, x, x, n);
}

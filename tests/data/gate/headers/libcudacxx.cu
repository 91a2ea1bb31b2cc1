// libcu++ headers by their cuda/std names, and the standard names klc's shims give.
#include <cuda/std/type_traits>
#include <cuda/std/limits>
#include <cuda/std/cstdint>
#include <limits>
#include <type_traits>
#include <cstdint>
#include <cfloat>
#include <climits>

template <typename T>
__device__ T clamp_to_finite(T v) {
    static_assert(cuda::std::is_floating_point<T>::value, "floats only");
    static_assert(std::is_same<T, float>::value, "float");
    const T hi = std::numeric_limits<T>::max();
    return v > hi ? hi : (v < -hi ? -hi : v);
}

extern "C" __global__ void saturate(const float* __restrict__ x, float* __restrict__ y,
                                    int64_t n, std::uint32_t flags) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = clamp_to_finite(x[i]);
    if (flags & 1u) v = fminf(v, FLT_MAX / 2);
    y[i] = (i < INT_MAX && n <= INT64_MAX) ? v : 0.0f;
}

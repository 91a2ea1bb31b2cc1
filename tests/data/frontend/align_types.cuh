#ifndef KLC_ALIGN_TYPES_CUH
#define KLC_ALIGN_TYPES_CUH

#include <cstdint>
#include <cuda_fp16.h>

struct __align__(16) Half8 {
  __half2 h[4];
};

struct __align__(8) PackedPair {
  float lo;
  float hi;
};

typedef struct __align__(32) {
  float v[8];
} Float8;

template <typename T, int N>
struct __align__(sizeof(T) * N) AlignedVector {
  T val[N];
  __device__ __forceinline__ T &operator[](int i) { return val[i]; }
  __device__ __forceinline__ const T &operator[](int i) const { return val[i]; }
};

template <typename T, int VecSize>
__global__ void vectorized_copy(const T *__restrict__ src, T *__restrict__ dst, int64_t n) {
  using Vec = AlignedVector<T, VecSize>;
  int64_t idx = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) * VecSize;
  if (idx + VecSize <= n) {
    Vec v = *reinterpret_cast<const Vec *>(src + idx);
    *reinterpret_cast<Vec *>(dst + idx) = v;
  } else {
    for (int64_t i = idx; i < n; ++i) dst[i] = src[i];
  }
}

__global__ void half8_scale(Half8 *data, __half2 s, int n8) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n8) return;
  Half8 x = data[i];
#pragma unroll
  for (int j = 0; j < 4; ++j) x.h[j] = __hmul2(x.h[j], s);
  data[i] = x;
}

__global__ void pack_pairs(const float *__restrict__ a, const float *__restrict__ b, PackedPair *out, int n) {
  __shared__ __align__(16) PackedPair tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    tile[threadIdx.x].lo = a[i];
    tile[threadIdx.x].hi = b[i];
  }
  __syncthreads();
  if (i < n) out[i] = tile[threadIdx.x];
}

__global__ void float8_sum(const Float8 *__restrict__ in, float *__restrict__ out, int n) {
  extern __shared__ __align__(sizeof(float4)) unsigned char dyn_smem[];
  float *red = reinterpret_cast<float *>(dyn_smem);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.f;
  if (i < n) {
#pragma unroll 8
    for (int k = 0; k < 8; ++k) s += in[i].v[k];
  }
  red[threadIdx.x] = s;
  __syncthreads();
  for (int stride = blockDim.x >> 1; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) red[threadIdx.x] += red[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = red[0];
}

#endif  // KLC_ALIGN_TYPES_CUH

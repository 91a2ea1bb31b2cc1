#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <vector_types.h>

__global__ void saxpy_float4(int n4, float a, const float4 *__restrict__ x, float4 *__restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 xv = x[i];
    float4 yv = y[i];
    yv.x = fmaf(a, xv.x, yv.x);
    yv.y = fmaf(a, xv.y, yv.y);
    yv.z = fmaf(a, xv.z, yv.z);
    yv.w = fmaf(a, xv.w, yv.w);
    y[i] = yv;
  }
}

__global__ void copy_reinterpret(const float *__restrict__ src, float *__restrict__ dst, size_t n) {
  size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * 4;
  if (i + 3 < n) {
    reinterpret_cast<float4 *>(dst)[i / 4] = reinterpret_cast<const float4 *>(src)[i / 4];
  } else {
    for (; i < n; ++i) dst[i] = src[i];
  }
}

__global__ void half2_gelu(const half2 *__restrict__ in, half2 *__restrict__ out, int n2) {
  const half2 k0 = __float2half2_rn(0.7978845608f);
  const half2 k1 = __float2half2_rn(0.044715f);
  const half2 half_ = __float2half2_rn(0.5f);
  const half2 one = __float2half2_rn(1.0f);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += blockDim.x * gridDim.x) {
    half2 x = in[i];
    half2 x3 = __hmul2(x, __hmul2(x, x));
    float2 inner = __half22float2(__hmul2(k0, __hfma2(k1, x3, x)));
    half2 t = __floats2half2_rn(tanhf(inner.x), tanhf(inner.y));
    out[i] = __hmul2(__hmul2(half_, x), __hadd2(one, t));
  }
}

__global__ void bf16x2_add(const __nv_bfloat162 *a, const __nv_bfloat162 *b, __nv_bfloat162 *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = __hadd2(a[i], b[i]);
}

__global__ void int4_unpack(const int4 *packed, int *out, const uint2 *meta, double2 *dd, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int4 p = packed[i];
  out[4 * i + 0] = p.x;
  out[4 * i + 1] = p.y;
  out[4 * i + 2] = p.z;
  out[4 * i + 3] = p.w;
  uint2 m = meta[i];
  dd[i] = make_double2((double)m.x, (double)m.y);
}

__global__ void char4_to_float4(const char4 *__restrict__ in, float4 *__restrict__ out, float scale, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    char4 c = __ldg(&in[i]);
    out[i] = make_float4(c.x * scale, c.y * scale, c.z * scale, c.w * scale);
  }
}

__global__ void dot_float2(const float2 *x, const float2 *y, float *result, int n) {
  __shared__ float cache[256];
  float t = 0.f;
  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
    float2 a = x[i], b = y[i];
    t += a.x * b.x + a.y * b.y;
  }
  cache[threadIdx.x] = t;
  __syncthreads();
  for (int s = blockDim.x / 2; s != 0; s /= 2) {
    if (threadIdx.x < s) cache[threadIdx.x] += cache[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(result, cache[0]);
}

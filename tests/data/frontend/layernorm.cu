#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

template <typename U>
__device__ void cuWelfordOnlineSum(const U curr, U &mu, U &sigma2, U &count) {
  count = count + U(1);
  U delta = curr - mu;
  U lmean = mu + delta / count;
  mu = lmean;
  U delta2 = curr - lmean;
  sigma2 = sigma2 + delta * delta2;
}

template <typename U>
__device__ void cuChanOnlineSum(const U muB, const U sigma2B, const U countB, U &mu, U &sigma2, U &count) {
  U delta = muB - mu;
  U nA = count;
  U nB = countB;
  count = count + countB;
  U nX = count;
  if (nX > U(0)) {
    nA = nA / nX;
    nB = nB / nX;
    mu = nA * mu + nB * muB;
    sigma2 = sigma2 + sigma2B + delta * delta * nA * nB * nX;
  } else {
    mu = U(0);
    sigma2 = U(0);
  }
}

template <typename T, typename U, typename V = T>
__global__ void cuApplyLayerNorm(V *__restrict__ output_vals, U *__restrict__ mean, U *__restrict__ invvar,
                                 const T *__restrict__ vals, const int n1, const int n2, const U epsilon,
                                 const V *__restrict__ gamma, const V *__restrict__ beta) {
  // Assumptions:
  // 1) blockDim.x == warpSize
  // 2) Tensors are contiguous
  for (auto i1 = blockIdx.y; i1 < n1; i1 += gridDim.y) {
    extern __shared__ float s_float[];
    U *buf = reinterpret_cast<U *>(s_float);
    U mu = U(0), sigma2 = U(0), count = U(0);
    const T *lvals = vals + i1 * n2;
    for (int l = threadIdx.y * blockDim.x + threadIdx.x; l < n2; l += blockDim.x * blockDim.y) {
      cuWelfordOnlineSum<U>(static_cast<U>(lvals[l]), mu, sigma2, count);
    }
    for (int l = 0; l <= 4; ++l) {
      int srcLaneB = (threadIdx.x + (1 << l)) & 31;
      U muB = WARP_SHFL(mu, srcLaneB);
      U countB = WARP_SHFL(count, srcLaneB);
      U sigma2B = WARP_SHFL(sigma2, srcLaneB);
      cuChanOnlineSum<U>(muB, sigma2B, countB, mu, sigma2, count);
    }
    if (blockDim.y > 1) {
      U *ubuf = buf;
      U *ibuf = ubuf + blockDim.y;
      for (int offset = blockDim.y / 2; offset > 0; offset /= 2) {
        if (threadIdx.x == 0 && threadIdx.y >= offset && threadIdx.y < 2 * offset) {
          const int wrt_y = threadIdx.y - offset;
          ubuf[2 * wrt_y] = mu;
          ubuf[2 * wrt_y + 1] = sigma2;
          ibuf[wrt_y] = count;
        }
        __syncthreads();
        if (threadIdx.x == 0 && threadIdx.y < offset) {
          cuChanOnlineSum<U>(ubuf[2 * threadIdx.y], ubuf[2 * threadIdx.y + 1], ibuf[threadIdx.y], mu, sigma2, count);
        }
        __syncthreads();
      }
    }
    U c_invvar = rsqrt(sigma2 / U(n2) + epsilon);
    V *ovals = output_vals + i1 * n2;
    for (int i = threadIdx.x + threadIdx.y * blockDim.x; i < n2; i += blockDim.x * blockDim.y) {
      U curr = static_cast<U>(lvals[i]);
      if (gamma != NULL && beta != NULL) {
        ovals[i] = gamma[i] * static_cast<V>(c_invvar * (curr - mu)) + beta[i];
      } else {
        ovals[i] = static_cast<V>(c_invvar * (curr - mu));
      }
    }
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      mean[i1] = mu;
      invvar[i1] = c_invvar;
    }
    __syncthreads();
  }
}

template <typename T, int kHidden, int kThreads>
__global__ __launch_bounds__(kThreads) void rmsnorm_fused(T *__restrict__ out, const T *__restrict__ in,
                                                          const T *__restrict__ weight, float eps) {
  constexpr int kPerThread = kHidden / kThreads;
  __shared__ float s_rms;
  __shared__ float red[kThreads / 32];
  float vals[kPerThread];
  float ss = 0.f;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    vals[i] = static_cast<float>(in[blockIdx.x * kHidden + threadIdx.x + i * kThreads]);
    ss += vals[i] * vals[i];
  }
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) ss += __shfl_xor_sync(0xffffffff, ss, m);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    ss = threadIdx.x < kThreads / 32 ? red[threadIdx.x] : 0.f;
    for (int m = 16; m > 0; m >>= 1) ss += __shfl_xor_sync(0xffffffff, ss, m);
    if (threadIdx.x == 0) s_rms = rsqrtf(ss / kHidden + eps);
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    int c = threadIdx.x + i * kThreads;
    out[blockIdx.x * kHidden + c] = static_cast<T>(vals[i] * s_rms * static_cast<float>(weight[c]));
  }
}

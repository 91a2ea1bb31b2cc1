#include <cuda_runtime.h>
#include <cuda_fp16.h>

#define CONV_TILE 16
#define CEIL(a, b) (((a) + (b) - 1) / (b))

struct ConvParams {
  int N, C, H, W, K, R, S, P, Q;
  int stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
};

__global__ void conv2d_direct_nchw(const float *__restrict__ input, const float *__restrict__ weight,
                                   const float *__restrict__ bias, float *__restrict__ output, const ConvParams p) {
  int q = blockIdx.x * blockDim.x + threadIdx.x;
  int pq = blockIdx.y * blockDim.y + threadIdx.y;
  int nk = blockIdx.z;
  int n = nk / p.K, k = nk % p.K;
  if (q >= p.Q || pq >= p.P) return;
  float acc = bias ? bias[k] : 0.f;
  for (int c = 0; c < p.C; ++c) {
    for (int r = 0; r < p.R; ++r) {
      int h = pq * p.stride_h - p.pad_h + r * p.dil_h;
      if (h < 0 || h >= p.H) continue;
#pragma unroll 3
      for (int s = 0; s < p.S; ++s) {
        int w = q * p.stride_w - p.pad_w + s * p.dil_w;
        if (w < 0 || w >= p.W) continue;
        acc += input[((n * p.C + c) * p.H + h) * p.W + w] * weight[((k * p.C + c) * p.R + r) * p.S + s];
      }
    }
  }
  output[((n * p.K + k) * p.P + pq) * p.Q + q] = acc;
}

template <int BM, int BN, int BK>
__global__ void __launch_bounds__(BM * BN / 16)
conv2d_implicit_gemm(const half *__restrict__ x, const half *__restrict__ w, half *__restrict__ y, ConvParams p) {
  __shared__ half sA[BK][BM + 8];
  __shared__ half sB[BK][BN + 8];
  const int gemm_m = p.N * p.P * p.Q;
  const int gemm_n = p.K;
  const int gemm_k = p.C * p.R * p.S;
  int tm = blockIdx.x * BM, tn = blockIdx.y * BN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < gemm_k; k0 += BK) {
    for (int i = threadIdx.x; i < BK * BM; i += blockDim.x) {
      int kk = i / BM, mm = i % BM;
      int m = tm + mm, kidx = k0 + kk;
      half v = __float2half(0.f);
      if (m < gemm_m && kidx < gemm_k) {
        int n = m / (p.P * p.Q), pq = m % (p.P * p.Q);
        int oh = pq / p.Q, ow = pq % p.Q;
        int c = kidx / (p.R * p.S), rs = kidx % (p.R * p.S);
        int ih = oh * p.stride_h - p.pad_h + (rs / p.S) * p.dil_h;
        int iw = ow * p.stride_w - p.pad_w + (rs % p.S) * p.dil_w;
        if (ih >= 0 && ih < p.H && iw >= 0 && iw < p.W) v = x[((n * p.H + ih) * p.W + iw) * p.C + c];
      }
      sA[kk][mm] = v;
    }
    for (int i = threadIdx.x; i < BK * BN; i += blockDim.x) {
      int kk = i / BN, nn = i % BN;
      sB[kk][nn] = (tn + nn < gemm_n && k0 + kk < gemm_k) ? w[(tn + nn) * gemm_k + k0 + kk] : __float2half(0.f);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b)
          acc[a][b] += __half2float(sA[kk][(threadIdx.x / (BN / 4)) * 4 + a]) * __half2float(sB[kk][(threadIdx.x % (BN / 4)) * 4 + b]);
    }
    __syncthreads();
  }
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      int m = tm + (threadIdx.x / (BN / 4)) * 4 + a, n = tn + (threadIdx.x % (BN / 4)) * 4 + b;
      if (m < gemm_m && n < gemm_n) y[m * gemm_n + n] = __float2half(acc[a][b]);
    }
}

__global__ void depthwise_conv3x3(const float *in, const float *filt, float *out, int C, int H, int W) {
  int c = blockIdx.z;
  int h = blockIdx.y * blockDim.y + threadIdx.y;
  int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (h >= H || w >= W) return;
  float s = 0.f;
#pragma unroll
  for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
    for (int dx = -1; dx <= 1; ++dx) {
      int yy = h + dy, xx = w + dx;
      if (yy >= 0 && yy < H && xx >= 0 && xx < W) s += in[(c * H + yy) * W + xx] * filt[c * 9 + (dy + 1) * 3 + dx + 1];
    }
  out[(c * H + h) * W + w] = s;
}

void conv_launch(const float *in, const float *wt, float *out, ConvParams p, cudaStream_t st) {
  dim3 block(CONV_TILE, CONV_TILE);
  dim3 grid(CEIL(p.Q, CONV_TILE), CEIL(p.P, CONV_TILE), p.N * p.K);
  conv2d_direct_nchw<<<grid, block, 0, st>>>(in, wt, nullptr, out, p);
  conv2d_implicit_gemm<64, 64, 16><<<dim3(CEIL(p.N * p.P * p.Q, 64), CEIL(p.K, 64)), 256, 0, st>>>(
      (const half *)in, (const half *)wt, (half *)out, p);
}

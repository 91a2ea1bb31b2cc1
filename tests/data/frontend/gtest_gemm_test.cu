// gtest-style unit tests with kernels defined alongside (klc corpus).
#include <gtest/gtest.h>
#include <cuda_runtime.h>
#include <vector>
#include "testbed_utils.h"

namespace {

__global__ void fill_kernel(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

template <int kTile>
__global__ void naive_gemm_kernel(const float *A, const float *B, float *C, int M, int N, int K) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  int row = blockIdx.y * kTile + threadIdx.y;
  int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < (K + kTile - 1) / kTile; ++t) {
    As[threadIdx.y][threadIdx.x] = (row < M && t * kTile + threadIdx.x < K) ? A[row * K + t * kTile + threadIdx.x] : 0.f;
    Bs[threadIdx.y][threadIdx.x] = (col < N && t * kTile + threadIdx.y < K) ? B[(t * kTile + threadIdx.y) * N + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

}  // namespace

TEST(SM80_Device_Gemm_f16n_f16t_f32t, 128x128x32_64x64x32) {
  std::vector<float> host(1 << 10, 0.f);
  float *d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, host.size() * sizeof(float)), cudaSuccess);
  fill_kernel<<<(host.size() + 255) / 256, 256>>>(d, 1.5f, (int)host.size());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaMemcpy(host.data(), d, host.size() * sizeof(float), cudaMemcpyDeviceToHost);
  for (float v : host) EXPECT_FLOAT_EQ(v, 1.5f);
  cudaFree(d);
}

TEST(Gemm, 128x128) {
  const int M = 128, N = 128, K = 64;
  float *A, *B, *C;
  cudaMalloc(&A, M * K * sizeof(float));
  cudaMalloc(&B, K * N * sizeof(float));
  cudaMalloc(&C, M * N * sizeof(float));
  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (M + 15) / 16);
  naive_gemm_kernel<16><<<grid, block>>>(A, B, C, M, N, K);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cudaFree(A); cudaFree(B); cudaFree(C);
}

TEST(Gemm, 64x64_k_residue) {
  float *A, *B, *C;
  cudaMallocManaged(&A, 64 * 70 * sizeof(float));
  cudaMallocManaged(&B, 70 * 64 * sizeof(float));
  cudaMallocManaged(&C, 64 * 64 * sizeof(float));
  naive_gemm_kernel<32><<<dim3(2, 2), dim3(32, 32)>>>(A, B, C, 64, 64, 70);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

class ReduceTest : public ::testing::Test {
 protected:
  void SetUp() override { cudaMalloc(&buf_, 4096 * sizeof(float)); }
  void TearDown() override { cudaFree(buf_); }
  float *buf_ = nullptr;
};

__global__ void reduce_test_kernel(const float *__restrict__ in, float *__restrict__ out, int n) {
  float v = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) v += in[i];
  for (int off = 16; off; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}

TEST_F(ReduceTest, SumsOnes) {
  fill_kernel<<<16, 256>>>(buf_, 1.0f, 4096);
  reduce_test_kernel<<<1, 256>>>(buf_, buf_ + 4095, 4095);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST_P(ParamGemm, 256x128) {
  auto [m, n] = GetParam();
  EXPECT_GT(m * n, 0);
}
INSTANTIATE_TEST_SUITE_P(Shapes, ParamGemm, ::testing::Values(std::make_pair(256, 128), std::make_pair(64, 64)));

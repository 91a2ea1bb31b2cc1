/***************************************************************************************************
 * A CUTLASS-2.x style threadblock GEMM, written for the klc front-end corpus.
 * Macro-heavy on purpose: CUTLASS_DEVICE, CUTLASS_HOST_DEVICE, CUTLASS_PRAGMA_UNROLL.
 **************************************************************************************************/
#pragma once

#include <cuda_fp16.h>
#include "cutlass/cutlass.h"
#include "cutlass/gemm/gemm.h"

#define CUTLASS_DEVICE __forceinline__ __device__
#define CUTLASS_HOST_DEVICE __forceinline__ __device__ __host__
#define CUTLASS_PRAGMA_UNROLL _Pragma("unroll")
#define CUTLASS_PRAGMA_NO_UNROLL _Pragma("unroll 1")

namespace cutlass {
namespace gemm {
namespace kernel {

struct GemmCoord {
  int m_, n_, k_;
  CUTLASS_HOST_DEVICE
  GemmCoord(int m = 0, int n = 0, int k = 0) : m_(m), n_(n), k_(k) {}
  CUTLASS_HOST_DEVICE int m() const { return m_; }
  CUTLASS_HOST_DEVICE int n() const { return n_; }
  CUTLASS_HOST_DEVICE int k() const { return k_; }
};

template <typename Element, int kTileM, int kTileN, int kTileK>
struct TileIterator {
  Element const *ptr_;
  int ld_;

  CUTLASS_DEVICE
  TileIterator(Element const *ptr, int ld) : ptr_(ptr), ld_(ld) {}

  CUTLASS_DEVICE
  void load(Element (&frag)[kTileK], int row) const {
    CUTLASS_PRAGMA_UNROLL
    for (int k = 0; k < kTileK; ++k) {
      frag[k] = ptr_[row * ld_ + k];
    }
  }

  CUTLASS_DEVICE
  TileIterator &operator++() {
    ptr_ += kTileK;
    return *this;
  }
};

/// Generic kernel entry point: the params struct lives in the kernel's argument space.
template <typename Operator>
__global__
void Kernel(typename Operator::Params params) {
  // Dynamic shared memory base pointer
  extern __shared__ int SharedStorageBase[];

  // Declare pointer to dynamic shared memory.
  typename Operator::SharedStorage *shared_storage =
      reinterpret_cast<typename Operator::SharedStorage *>(SharedStorageBase);

  Operator op;

  op(params, *shared_storage);
}

/// Same entry point with an explicit thread count for the register allocator
template <typename Operator>
__global__ __launch_bounds__(Operator::kThreadCount, 1)
void Kernel2(typename Operator::Params params) {
  extern __shared__ int SharedStorageBase[];
  typename Operator::SharedStorage *shared_storage =
      reinterpret_cast<typename Operator::SharedStorage *>(SharedStorageBase);
  Operator::invoke(params, *shared_storage);
}

template <typename ElementA, typename ElementB, typename ElementC, int kBlockM = 128,
          int kBlockN = 128, int kBlockK = 32, int kStages = 3>
__global__ void __launch_bounds__(256)
gemm_sm80_multistage(
    GemmCoord problem_size,
    ElementA const * __restrict__ ptr_A, int lda,
    ElementB const * __restrict__ ptr_B, int ldb,
    ElementC * __restrict__ ptr_C, int ldc,
    ElementC alpha, ElementC beta) {

  __shared__ ElementA smem_A[kStages][kBlockM][kBlockK + 8];
  __shared__ ElementB smem_B[kStages][kBlockK][kBlockN + 8];

  int const tid = threadIdx.x;
  int const warp_idx = __shfl_sync(0xffffffff, tid / 32, 0);
  int const lane_idx = tid % 32;

  int block_m = blockIdx.x * kBlockM;
  int block_n = blockIdx.y * kBlockN;

  float accum[kBlockM / 16][kBlockN / 64];

  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < kBlockM / 16; ++i) {
    CUTLASS_PRAGMA_UNROLL
    for (int j = 0; j < kBlockN / 64; ++j) {
      accum[i][j] = 0.f;
    }
  }

  int gemm_k_iterations = (problem_size.k() + kBlockK - 1) / kBlockK;

  CUTLASS_PRAGMA_NO_UNROLL
  for (int k_iter = 0; k_iter < gemm_k_iterations; ++k_iter) {
    int stage = k_iter % kStages;
    for (int idx = tid; idx < kBlockM * kBlockK; idx += blockDim.x) {
      int r = idx / kBlockK, c = idx % kBlockK;
      int gr = block_m + r, gc = k_iter * kBlockK + c;
      smem_A[stage][r][c] = (gr < problem_size.m() && gc < problem_size.k())
                                ? ptr_A[gr * lda + gc] : ElementA(0);
    }
    for (int idx = tid; idx < kBlockK * kBlockN; idx += blockDim.x) {
      int r = idx / kBlockN, c = idx % kBlockN;
      int gr = k_iter * kBlockK + r, gc = block_n + c;
      smem_B[stage][r][c] = (gr < problem_size.k() && gc < problem_size.n())
                                ? ptr_B[gr * ldb + gc] : ElementB(0);
    }
    __syncthreads();

    CUTLASS_PRAGMA_UNROLL
    for (int kk = 0; kk < kBlockK; ++kk) {
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kBlockM / 16; ++i) {
        CUTLASS_PRAGMA_UNROLL
        for (int j = 0; j < kBlockN / 64; ++j) {
          int row = warp_idx * (kBlockM / 16) + i;
          int col = lane_idx + j * 32;
          accum[i][j] += float(smem_A[stage][row % kBlockM][kk]) *
                         float(smem_B[stage][kk][col % kBlockN]);
        }
      }
    }
    __syncthreads();
  }

  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < kBlockM / 16; ++i) {
    CUTLASS_PRAGMA_UNROLL
    for (int j = 0; j < kBlockN / 64; ++j) {
      int row = block_m + warp_idx * (kBlockM / 16) + i;
      int col = block_n + lane_idx + j * 32;
      if (row < problem_size.m() && col < problem_size.n()) {
        ElementC c = ptr_C[row * ldc + col];
        ptr_C[row * ldc + col] = alpha * ElementC(accum[i][j]) + beta * c;
      }
    }
  }
}

} // namespace kernel
} // namespace gemm
} // namespace cutlass

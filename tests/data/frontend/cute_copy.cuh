// CuTe-flavoured copy and tiled-MMA kernels (klc corpus).
#pragma once
#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>

#ifndef CUTE_HOST_DEVICE
#define CUTE_HOST_DEVICE __forceinline__ __host__ __device__
#define CUTE_DEVICE __forceinline__ __device__
#define CUTE_UNROLL _Pragma("unroll")
#define CUTE_NO_UNROLL _Pragma("unroll 1")
#endif

using namespace cute;

namespace klc_corpus {

template <class T>
CUTE_HOST_DEVICE constexpr T ceil_div_(T a, T b) { return (a + b - 1) / b; }

CUTE_DEVICE
int lane_id() {
  int lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

template <class Engine, class Layout>
CUTE_HOST_DEVICE
void clear_tensor(Tensor<Engine, Layout> &t) {
  CUTE_UNROLL
  for (int i = 0; i < size(t); ++i) {
    t(i) = 0;
  }
}

template <class TensorS, class TensorD, class ThreadLayout>
__global__ void copy_kernel(TensorS S, TensorD D, ThreadLayout)
{
  using Element = typename TensorS::value_type;

  // Slice the tiled tensors
  Tensor tile_S = S(make_coord(_, _), blockIdx.x, blockIdx.y);
  Tensor tile_D = D(make_coord(_, _), blockIdx.x, blockIdx.y);

  Tensor thr_tile_S = local_partition(tile_S, ThreadLayout{}, threadIdx.x);
  Tensor thr_tile_D = local_partition(tile_D, ThreadLayout{}, threadIdx.x);

  Tensor fragment = make_tensor_like(thr_tile_S);

  copy(thr_tile_S, fragment);
  copy(fragment, thr_tile_D);
}

template <class TensorS, class TensorD, class Tiled_Copy>
__global__ void copy_kernel_vectorized(TensorS S, TensorD D, Tiled_Copy tiled_copy)
{
  Tensor tile_S = S(make_coord(_, _), blockIdx.x, blockIdx.y);
  Tensor tile_D = D(make_coord(_, _), blockIdx.x, blockIdx.y);

  ThrCopy thr_copy = tiled_copy.get_thread_slice(threadIdx.x);
  Tensor thr_tile_S = thr_copy.partition_S(tile_S);
  Tensor thr_tile_D = thr_copy.partition_D(tile_D);

  Tensor fragment = make_fragment_like(thr_tile_D);
  CUTE_UNROLL
  for (int k = 0; k < size<2>(thr_tile_S); ++k) {
    copy(tiled_copy, thr_tile_S(_, _, k), fragment(_, _, k));
  }
  copy(tiled_copy, fragment, thr_tile_D);
}

template <class ProblemShape, class CtaTiler,
          class TA, class AStride, class ASmemLayout, class TiledCopyA,
          class TB, class BStride, class BSmemLayout, class TiledCopyB,
          class TC, class CStride, class CSmemLayout, class TiledMma,
          class Alpha, class Beta>
__global__ static
__launch_bounds__(decltype(size(TiledMma{}))::value)
void
gemm_device(ProblemShape shape_MNK, CtaTiler cta_tiler,
            TA const* A, AStride dA, ASmemLayout sA_layout, TiledCopyA copy_a,
            TB const* B, BStride dB, BSmemLayout sB_layout, TiledCopyB copy_b,
            TC      * C, CStride dC, CSmemLayout          , TiledMma mma,
            Alpha alpha, Beta beta)
{
  CUTE_STATIC_ASSERT_V(rank(shape_MNK) == Int<3>{});
  CUTE_STATIC_ASSERT_V(rank(cta_tiler) == Int<3>{});

  Tensor mA = make_tensor(make_gmem_ptr(A), select<0,2>(shape_MNK), dA);
  Tensor mB = make_tensor(make_gmem_ptr(B), select<1,2>(shape_MNK), dB);
  Tensor mC = make_tensor(make_gmem_ptr(C), select<0,1>(shape_MNK), dC);

  auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);
  Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X,_1>{});
  Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step< X,_1,_1>{});
  Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1,_1, X>{});

  __shared__ TA smemA[cosize_v<ASmemLayout>];
  __shared__ TB smemB[cosize_v<BSmemLayout>];
  Tensor sA = make_tensor(make_smem_ptr(smemA), sA_layout);
  Tensor sB = make_tensor(make_smem_ptr(smemB), sB_layout);

  ThrCopy thr_copy_a = copy_a.get_slice(threadIdx.x);
  Tensor tAgA = thr_copy_a.partition_S(gA);
  Tensor tAsA = thr_copy_a.partition_D(sA);
  ThrCopy thr_copy_b = copy_b.get_slice(threadIdx.x);
  Tensor tBgB = thr_copy_b.partition_S(gB);
  Tensor tBsB = thr_copy_b.partition_D(sB);

  ThrMMA thr_mma = mma.get_slice(threadIdx.x);
  Tensor tCsA = thr_mma.partition_A(sA);
  Tensor tCsB = thr_mma.partition_B(sB);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);
  clear(tCrC);

  auto K_TILE_MAX = size<3>(tAgA);

  CUTE_NO_UNROLL
  for (int k_tile = 0; k_tile < K_TILE_MAX; ++k_tile)
  {
    copy(copy_a, tAgA(_,_,_,k_tile), tAsA);
    copy(copy_b, tBgB(_,_,_,k_tile), tBsB);
    cp_async_fence();
    cp_async_wait<0>();
    __syncthreads();
    gemm(mma, tCsA, tCsB, tCrC);
    __syncthreads();
  }

  axpby(alpha, tCrC, beta, tCgC);
}

} // namespace klc_corpus

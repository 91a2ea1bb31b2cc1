// CUTLASS-3 style kernel entry with CuTe macros, __grid_constant__ params and cluster shapes.
#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/arch/barrier.h"
#include "cutlass/pipeline/pipeline.hpp"

namespace cutlass::device_kernel_corpus {

template <class Operator>
__global__
#ifdef __CUDACC__
__launch_bounds__(Operator::MaxThreadsPerBlock, Operator::MinBlocksPerMultiprocessor)
#endif
void device_kernel(CUTLASS_GRID_CONSTANT typename Operator::Params const params)
{
  // Dynamic shared memory base pointer
  extern __shared__ char smem[];
  Operator op;
  op(params, smem);
  cutlass::arch::synclog_print();
}

template <class ProblemShape, class TileShape, class ClusterShape>
struct KernelTmaWarpSpecialized {
  static constexpr int NumThreadsPerWarpGroup = 128;
  static constexpr uint32_t MaxThreadsPerBlock = 384;

  struct SharedStorage {
    alignas(128) float A[2][128 * 64];
    alignas(128) float B[2][64 * 128];
    uint64_t full[2];
    uint64_t empty[2];
  };

  struct Params {
    ProblemShape problem_shape;
    float const *ptr_A;
    float const *ptr_B;
    float *ptr_C;
  };

  CUTLASS_DEVICE
  void operator()(Params const &params, char *smem_buf) {
    using namespace cute;
    SharedStorage &storage = *reinterpret_cast<SharedStorage *>(smem_buf);
    int warp_group_idx = canonical_warp_group_idx();
    int lane_predicate = cute::elect_one_sync();
    auto cluster_shape = ClusterShape{};
    if (warp_group_idx == 0) {
      cutlass::arch::warpgroup_reg_dealloc<40>();
      if (lane_predicate) {
        CUTE_UNROLL
        for (int k = 0; k < 2; ++k) {
          storage.full[k] = 0;
        }
      }
    } else {
      cutlass::arch::warpgroup_reg_alloc<232>();
      float acc[64];
      CUTE_UNROLL
      for (int i = 0; i < 64; ++i) acc[i] = 0.f;
      CUTE_NO_UNROLL
      for (int k_tile = 0; k_tile < size<2>(params.problem_shape); ++k_tile) {
        CUTE_UNROLL
        for (int i = 0; i < 64; ++i) acc[i] += storage.A[k_tile & 1][i] * storage.B[k_tile & 1][i];
      }
      params.ptr_C[threadIdx.x] = acc[0];
    }
    (void)cluster_shape;
  }
};

template <typename T>
__global__ void __launch_bounds__(128, 1) __cluster_dims__(2, 1, 1)
fill_with_cluster(T* __restrict__ out, T value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

template <class TmaLoad, class GmemTensor>
__global__ void tma_load_kernel(__grid_constant__ const TmaLoad tma_load, GmemTensor gmem_tensor) {
  using namespace cute;
  constexpr int tma_transaction_bytes = 128 * 128 * sizeof(float);
  __shared__ alignas(128) float smem_data[128 * 128];
  __shared__ uint64_t tma_load_mbar;
  auto smem_tensor = make_tensor(make_smem_ptr(smem_data), make_layout(make_shape(_128{}, _128{})));
  if (threadIdx.x == 0) {
    auto gmem_tensor_coord = tma_load.get_tma_tensor(shape(gmem_tensor));
    auto gmem_tensor_coord_cta = local_tile(gmem_tensor_coord, Tile<_128, _128>{}, make_coord(blockIdx.x, blockIdx.y));
    initialize_barrier(tma_load_mbar, /* arrival count */ 1);
    set_barrier_transaction_bytes(tma_load_mbar, tma_transaction_bytes);
    auto tma_load_per_cta = tma_load.get_slice(0);
    copy(tma_load.with(tma_load_mbar), tma_load_per_cta.partition_S(gmem_tensor_coord_cta),
         tma_load_per_cta.partition_D(smem_tensor));
  }
  __syncthreads();
  wait_barrier(tma_load_mbar, /* phase */ 0);
}

} // namespace cutlass::device_kernel_corpus

// CUB-style agent + kernel layering with namespace macros (no semicolons at file scope).
#pragma once

#include <cub/config.cuh>
#include <cub/util_type.cuh>

CUB_NAMESPACE_BEGIN

namespace detail { namespace reduce_corpus {

template <typename T>
struct Sum {
  _CCCL_HOST_DEVICE _CCCL_FORCEINLINE T operator()(const T &a, const T &b) const { return a + b; }
};

template <int BLOCK_THREADS, int ITEMS_PER_THREAD, typename InputT, typename OutputT, typename ReductionOp>
struct AgentReduce {
  struct TempStorage { OutputT warp_aggregates[BLOCK_THREADS / 32]; };
  TempStorage &temp_storage;
  const InputT *d_in;
  ReductionOp op;

  _CCCL_DEVICE _CCCL_FORCEINLINE AgentReduce(TempStorage &ts, const InputT *in, ReductionOp o)
      : temp_storage(ts), d_in(in), op(o) {}

  _CCCL_DEVICE _CCCL_FORCEINLINE OutputT ConsumeRange(int begin, int end) {
    OutputT thread_agg{};
    #pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
      int idx = begin + threadIdx.x + i * BLOCK_THREADS;
      if (idx < end) thread_agg = op(thread_agg, static_cast<OutputT>(d_in[idx]));
    }
    for (int off = 16; off > 0; off >>= 1)
      thread_agg = op(thread_agg, __shfl_down_sync(0xffffffffu, thread_agg, off));
    if ((threadIdx.x & 31) == 0) temp_storage.warp_aggregates[threadIdx.x / 32] = thread_agg;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < BLOCK_THREADS / 32; ++w) thread_agg = op(thread_agg, temp_storage.warp_aggregates[w]);
    }
    return thread_agg;
  }
};

template <typename ChainedPolicyT, typename InputIteratorT, typename OutputIteratorT, typename OffsetT,
          typename ReductionOpT, typename AccumT>
CUB_DETAIL_KERNEL_ATTRIBUTES __launch_bounds__(int(ChainedPolicyT::ActivePolicy::ReducePolicy::BLOCK_THREADS))
void DeviceReduceKernel(InputIteratorT d_in, OutputIteratorT d_out, OffsetT num_items, ReductionOpT reduction_op)
{
  using Policy = typename ChainedPolicyT::ActivePolicy::ReducePolicy;
  using Agent = AgentReduce<Policy::BLOCK_THREADS, Policy::ITEMS_PER_THREAD, AccumT, AccumT, ReductionOpT>;
  __shared__ typename Agent::TempStorage temp_storage;
  const int tile = Policy::BLOCK_THREADS * Policy::ITEMS_PER_THREAD;
  AccumT block_aggregate = Agent(temp_storage, d_in, reduction_op).ConsumeRange(blockIdx.x * tile, min((int)num_items, (int)(blockIdx.x + 1) * tile));
  if (threadIdx.x == 0) d_out[blockIdx.x] = block_aggregate;
}

template <typename T, int BLOCK_THREADS>
__global__ void __launch_bounds__(BLOCK_THREADS)
SingleTileReduceKernel(const T *d_in, T *d_out, int num_items)
{
  using Agent = AgentReduce<BLOCK_THREADS, 4, T, T, Sum<T>>;
  __shared__ typename Agent::TempStorage temp_storage;
  T agg = Agent(temp_storage, d_in, Sum<T>{}).ConsumeRange(0, num_items);
  if (threadIdx.x == 0) *d_out = agg;
}

template <typename KeyT, int RADIX_BITS>
__global__ void RadixHistogramKernel(const KeyT *__restrict__ keys, unsigned int *__restrict__ bins, int n, int bit)
{
  constexpr int RADIX = 1 << RADIX_BITS;
  __shared__ unsigned int s_bins[RADIX];
  for (int i = threadIdx.x; i < RADIX; i += blockDim.x) s_bins[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&s_bins[(keys[i] >> bit) & (RADIX - 1)], 1u);
  __syncthreads();
  for (int i = threadIdx.x; i < RADIX; i += blockDim.x) atomicAdd(&bins[i], s_bins[i]);
}

}}  // namespace detail::reduce_corpus

CUB_NAMESPACE_END

#pragma once
#include <cuda_runtime.h>

namespace klc { namespace scan {

template <typename T, int BLOCK_THREADS>
__device__ __forceinline__ T warp_inclusive_scan(T v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    T n = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += n;
  }
  return v;
}

template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__global__ void __launch_bounds__(BLOCK_THREADS)
block_scan_kernel(const T *__restrict__ d_in, T *__restrict__ d_out, T *__restrict__ d_block_sums, int n) {
  __shared__ T warp_totals[BLOCK_THREADS / 32];
  T items[ITEMS_PER_THREAD];
  const int block_offset = blockIdx.x * BLOCK_THREADS * ITEMS_PER_THREAD;

#pragma unroll
  for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
    int idx = block_offset + threadIdx.x * ITEMS_PER_THREAD + i;
    items[i] = idx < n ? d_in[idx] : T(0);
  }
  T thread_total = 0;
#pragma unroll
  for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
    thread_total += items[i];
    items[i] = thread_total;
  }
  T warp_scan = warp_inclusive_scan<T, BLOCK_THREADS>(thread_total);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (lane == 31) warp_totals[warp] = warp_scan;
  __syncthreads();
  if (warp == 0) {
    T t = lane < BLOCK_THREADS / 32 ? warp_totals[lane] : T(0);
    t = warp_inclusive_scan<T, BLOCK_THREADS>(t);
    if (lane < BLOCK_THREADS / 32) warp_totals[lane] = t;
  }
  __syncthreads();
  T prefix = (warp > 0 ? warp_totals[warp - 1] : T(0)) + warp_scan - thread_total;
#pragma unroll
  for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
    int idx = block_offset + threadIdx.x * ITEMS_PER_THREAD + i;
    if (idx < n) d_out[idx] = items[i] + prefix;
  }
  if (threadIdx.x == BLOCK_THREADS - 1 && d_block_sums) d_block_sums[blockIdx.x] = prefix + thread_total;
}

template <typename T>
__global__ void add_block_offsets(T *d_out, const T *__restrict__ d_block_sums, int n, int tile) {
  if (blockIdx.x == 0) return;
  T offset = d_block_sums[blockIdx.x - 1];
  for (int i = threadIdx.x; i < tile; i += blockDim.x) {
    int idx = blockIdx.x * tile + i;
    if (idx < n) d_out[idx] += offset;
  }
}

template <typename T>
__global__ void decoupled_lookback_scan(const T *in, T *out, volatile unsigned long long *status, unsigned *tile_counter, int n) {
  __shared__ unsigned tile_id;
  if (threadIdx.x == 0) tile_id = atomicAdd(tile_counter, 1u);
  __syncthreads();
  const unsigned t = tile_id;
  int idx = t * blockDim.x + threadIdx.x;
  T v = idx < n ? in[idx] : T(0);
  T agg = v;
  for (int o = 16; o > 0; o >>= 1) agg += __shfl_xor_sync(0xffffffffu, agg, o);
  if (threadIdx.x == 0) {
    T exclusive = 0;
    int look = (int)t - 1;
    while (look >= 0) {
      unsigned long long s;
      do { s = status[look]; } while ((s >> 62) == 0);
      exclusive += (T)(s & 0x3fffffffffffffffULL);
      if ((s >> 62) == 2) break;
      --look;
    }
    __threadfence();
    status[t] = (2ULL << 62) | (unsigned long long)(exclusive + agg);
  }
  if (idx < n) out[idx] = v;
}

}}  // namespace klc::scan

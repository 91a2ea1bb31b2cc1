// ATen-style persistent softmax + block reduce (klc corpus; hand-written).
#include <ATen/cuda/DeviceUtils.cuh>
#include <c10/macros/Macros.h>
#include <cuda_runtime.h>

#define C10_WARP_SIZE 32
#define WARP_SHFL_XOR(v, m) __shfl_xor_sync(0xffffffff, v, m, C10_WARP_SIZE)

namespace at {
namespace native {

template <typename T>
__device__ __forceinline__ T WARP_SHFL_DOWN(T value, unsigned int delta,
                                            int width = warpSize,
                                            unsigned int mask = 0xffffffff) {
#if !defined(USE_ROCM)
  return __shfl_down_sync(mask, value, delta, width);
#else
  return __shfl_down(value, delta, width);
#endif
}

template <typename acc_t, int WARP_BATCH, int WARP_SIZE, template<typename> class ReduceOp>
__device__ __forceinline__ void warp_reduce(acc_t* sum) {
  ReduceOp<acc_t> r;
  #pragma unroll
  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
    #pragma unroll
    for (int i = 0;  i < WARP_BATCH;  ++i) {
      acc_t b = WARP_SHFL_XOR(sum[i], offset);
      sum[i] = r(sum[i], b);
    }
  }
}

template <typename input_t, typename output_t, typename acc_t, int log2_elements, bool is_log_softmax>
__global__ void softmax_warp_forward(output_t *dst, const input_t *src, int batch_size,
                                     int stride, int element_count)
{
  constexpr int next_power_of_two = 1 << log2_elements;
  constexpr int WARP_SIZE = (next_power_of_two < C10_WARP_SIZE) ? next_power_of_two : C10_WARP_SIZE;
  constexpr int WARP_ITERATIONS = next_power_of_two / WARP_SIZE;
  constexpr int WARP_BATCH = (next_power_of_two <= 128) ? 2 : 1;

  int first_batch = (blockDim.y * blockIdx.x + threadIdx.y) * WARP_BATCH;
  int local_batches = batch_size - first_batch;
  if (local_batches > WARP_BATCH)
    local_batches = WARP_BATCH;
  int local_idx = threadIdx.x;

  src += first_batch * stride + local_idx;
  dst += first_batch * stride + local_idx;

  acc_t elements[WARP_BATCH][WARP_ITERATIONS];
  for (int i = 0;  i < WARP_BATCH;  ++i) {
    int batch_element_count = (i >= local_batches) ? 0 : element_count;
    for (int it = 0;  it < WARP_ITERATIONS;  ++it) {
      int element_index = local_idx + it * WARP_SIZE;
      elements[i][it] = element_index < batch_element_count
          ? static_cast<acc_t>(src[i*element_count+it*WARP_SIZE])
          : -std::numeric_limits<acc_t>::infinity();
    }
  }

  acc_t max_value[WARP_BATCH];
  #pragma unroll
  for (int i = 0;  i < WARP_BATCH;  ++i) {
    max_value[i] = elements[i][0];
    #pragma unroll
    for (int it = 1;  it < WARP_ITERATIONS;  ++it) {
      max_value[i] = (max_value[i] > elements[i][it]) ? max_value[i] : elements[i][it];
    }
  }
  warp_reduce<acc_t, WARP_BATCH, WARP_SIZE, Max>(max_value);

  acc_t sum[WARP_BATCH] { 0.0f };
  #pragma unroll
  for (int i = 0;  i < WARP_BATCH;  ++i) {
    #pragma unroll
    for (int it = 0;  it < WARP_ITERATIONS;  ++it) {
      if (is_log_softmax) {
        sum[i] += std::exp(elements[i][it] - max_value[i]);
      } else {
        elements[i][it] = std::exp(elements[i][it] - max_value[i]);
        sum[i] += elements[i][it];
      }
    }
  }
  warp_reduce<acc_t, WARP_BATCH, WARP_SIZE, Add>(sum);

  #pragma unroll
  for (int i = 0;  i < WARP_BATCH;  ++i) {
    if (i >= local_batches)
      break;
    if (is_log_softmax) sum[i] = std::log(sum[i]);
    #pragma unroll
    for (int it = 0;  it < WARP_ITERATIONS;  ++it) {
      int element_index = local_idx + it * WARP_SIZE;
      if (element_index < element_count) {
        if (is_log_softmax) {
          dst[i*element_count+it*WARP_SIZE] = elements[i][it] - max_value[i] - sum[i];
        } else {
          dst[i*element_count+it*WARP_SIZE] = elements[i][it] / sum[i];
        }
      } else {
        break;
      }
    }
  }
}

template <typename scalar_t, typename acc_t, int ILP>
C10_LAUNCH_BOUNDS_1(1024)
__global__ void cunn_SoftMaxForward(scalar_t *output, const scalar_t *input, int classes)
{
  extern __shared__ unsigned char smem[];
  auto sdata = reinterpret_cast<acc_t*>(smem);

  input += static_cast<int64_t>(blockIdx.x) * classes;
  output += static_cast<int64_t>(blockIdx.x) * classes;

  acc_t threadMax = -at::numeric_limits<acc_t>::max();
  for (int offset = threadIdx.x; offset < classes; offset += blockDim.x) {
    threadMax = ::max(threadMax, static_cast<acc_t>(input[offset]));
  }
  sdata[threadIdx.x] = threadMax;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sdata[threadIdx.x] = ::max(sdata[threadIdx.x], sdata[threadIdx.x + s]);
    __syncthreads();
  }
  acc_t max_k = sdata[0];
  __syncthreads();

  acc_t threadExp = 0;
  for (int offset = threadIdx.x; offset < classes; offset += blockDim.x) {
    threadExp += std::exp(static_cast<acc_t>(input[offset]) - max_k);
  }
  sdata[threadIdx.x] = threadExp;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sdata[threadIdx.x] += sdata[threadIdx.x + s];
    __syncthreads();
  }
  acc_t sumAll = sdata[0];
  for (int offset = threadIdx.x; offset < classes; offset += blockDim.x) {
    output[offset] = static_cast<scalar_t>(std::exp(static_cast<acc_t>(input[offset]) - max_k) / sumAll);
  }
}

template <typename T>
__global__ void block_reduce_sum_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t n) {
  __shared__ T shared[C10_WARP_SIZE];
  T val = 0;
  for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)blockDim.x * gridDim.x)
    val += in[i];
  const int lid = threadIdx.x % C10_WARP_SIZE;
  const int wid = threadIdx.x / C10_WARP_SIZE;
  for (int offset = 16; offset > 0; offset >>= 1)
    val += WARP_SHFL_DOWN(val, offset);
  if (lid == 0) shared[wid] = val;
  __syncthreads();
  val = (threadIdx.x < blockDim.x / C10_WARP_SIZE) ? shared[lid] : T(0);
  if (wid == 0) {
    for (int offset = 16; offset > 0; offset >>= 1)
      val += WARP_SHFL_DOWN(val, offset);
    if (lid == 0) atomicAdd(out, val);
  }
}

} // namespace native
} // namespace at

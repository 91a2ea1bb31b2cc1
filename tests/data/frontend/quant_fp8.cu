// FP8 / int8 quantization kernels with dispatch macros in host code.
#include <cuda_fp8.h>
#include <cuda_fp16.h>
#include <torch/all.h>
#include <c10/cuda/CUDAGuard.h>

#define FP8_E4M3_MAX 448.0f
#define VLLM_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE(at::ScalarType::Float, __VA_ARGS__) \
                     AT_DISPATCH_CASE(at::ScalarType::Half, __VA_ARGS__))

namespace quant {

__device__ __forceinline__ float atomicMaxFloatPos(float *addr, float value) {
  return __int_as_float(atomicMax(reinterpret_cast<int *>(addr), __float_as_int(value)));
}

template <typename scalar_t, bool is_scale_inverted>
__device__ __forceinline__ __nv_fp8_e4m3 scaled_fp8_conversion(float const val, float const scale) {
  float x = is_scale_inverted ? val * scale : val / scale;
  float r = fmaxf(-FP8_E4M3_MAX, fminf(x, FP8_E4M3_MAX));
  return static_cast<__nv_fp8_e4m3>(r);
}

template <typename scalar_t>
__global__ void segmented_max_reduction(float *__restrict__ scale, const scalar_t *__restrict__ input,
                                        int64_t num_elems) {
  __shared__ float cache[1024];
  int64_t i = blockDim.x * blockIdx.x + threadIdx.x;
  scalar_t tmp = 0.0;
  while (i < num_elems) {
    float x = static_cast<float>(input[i]);
    tmp = max(tmp, fabs(x));
    i += blockDim.x * gridDim.x;
  }
  cache[threadIdx.x] = tmp;
  __syncthreads();
  int ib = blockDim.x / 2;
  while (ib != 0) {
    if (threadIdx.x < ib && cache[threadIdx.x + ib] > cache[threadIdx.x]) {
      cache[threadIdx.x] = cache[threadIdx.x + ib];
    }
    __syncthreads();
    ib /= 2;
  }
  if (threadIdx.x == 0) {
    atomicMaxFloatPos(scale, cache[0] / FP8_E4M3_MAX);
  }
}

template <typename scalar_t>
__global__ void scaled_fp8_quant_kernel(__nv_fp8_e4m3 *__restrict__ out, const scalar_t *__restrict__ input,
                                        const float *__restrict__ scale, int64_t num_elems) {
  int tid = blockDim.x * blockIdx.x + threadIdx.x;
  const float inverted_scale = 1.0f / (*scale);
  using vec4 = struct __align__(8) { scalar_t x, y, z, w; };
  const vec4 *vectorized_in = reinterpret_cast<const vec4 *>(input);
  int64_t const num_vec_elems = num_elems >> 2;
#pragma unroll 4
  for (int64_t i = tid; i < num_vec_elems; i += blockDim.x * gridDim.x) {
    vec4 in_vec = vectorized_in[i];
    out[i * 4 + 0] = scaled_fp8_conversion<scalar_t, true>(static_cast<float>(in_vec.x), inverted_scale);
    out[i * 4 + 1] = scaled_fp8_conversion<scalar_t, true>(static_cast<float>(in_vec.y), inverted_scale);
    out[i * 4 + 2] = scaled_fp8_conversion<scalar_t, true>(static_cast<float>(in_vec.z), inverted_scale);
    out[i * 4 + 3] = scaled_fp8_conversion<scalar_t, true>(static_cast<float>(in_vec.w), inverted_scale);
  }
  for (int64_t i = num_vec_elems * 4 + tid; i < num_elems; i += blockDim.x * gridDim.x) {
    out[i] = scaled_fp8_conversion<scalar_t, true>(static_cast<float>(input[i]), inverted_scale);
  }
}

__global__ void int8_rowwise_quant(const half *__restrict__ in, int8_t *__restrict__ out, float *__restrict__ scales,
                                   int cols) {
  const half *row = in + (int64_t)blockIdx.x * cols;
  float amax = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) amax = fmaxf(amax, fabsf(__half2float(row[c])));
  for (int m = 16; m; m >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffff, amax, m));
  __shared__ float warp_max[32];
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = amax;
  __syncthreads();
  if (threadIdx.x == 0) {
    float m = 0.f;
    for (int w = 0; w < (blockDim.x + 31) / 32; ++w) m = fmaxf(m, warp_max[w]);
    warp_max[0] = m;
    scales[blockIdx.x] = m / 127.f;
  }
  __syncthreads();
  const float inv = warp_max[0] > 0.f ? 127.f / warp_max[0] : 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    out[(int64_t)blockIdx.x * cols + c] = (int8_t)__float2int_rn(__half2float(row[c]) * inv);
}

}  // namespace quant

void static_scaled_fp8_quant(torch::Tensor &out, torch::Tensor const &input, torch::Tensor const &scale) {
  int64_t num_tokens = input.numel() / input.size(-1);
  int64_t num_elems = input.numel();
  dim3 const grid(num_tokens);
  dim3 const block(1024);
  const at::cuda::OptionalCUDAGuard device_guard(device_of(input));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  VLLM_DISPATCH_FLOATING_TYPES(input.scalar_type(), "scaled_fp8_quant_kernel", [&] {
    quant::scaled_fp8_quant_kernel<scalar_t><<<grid, block, 0, stream>>>(
        out.data_ptr<__nv_fp8_e4m3>(), input.data_ptr<scalar_t>(), scale.data_ptr<float>(), num_elems);
  });
}

void dynamic_scaled_fp8_quant(torch::Tensor &out, torch::Tensor const &input, torch::Tensor &scale) {
  int64_t num_elems = input.numel();
  dim3 const grid(input.numel() / input.size(-1));
  dim3 const block(1024);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  VLLM_DISPATCH_FLOATING_TYPES(input.scalar_type(), "scaled_fp8_quant_kernel", [&] {
    quant::segmented_max_reduction<scalar_t><<<grid, block, 0, stream>>>(scale.data_ptr<float>(),
                                                                          input.data_ptr<scalar_t>(), num_elems);
    quant::scaled_fp8_quant_kernel<scalar_t><<<grid, block, 0, stream>>>(
        out.data_ptr<__nv_fp8_e4m3>(), input.data_ptr<scalar_t>(), scale.data_ptr<float>(), num_elems);
  });
}

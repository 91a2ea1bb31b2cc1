#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#define CHECK_CUDA(x) TORCH_CHECK(x.device().is_cuda(), #x " must be a CUDA tensor")
#define CHECK_CONTIGUOUS(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")
#define CHECK_INPUT(x) \
  CHECK_CUDA(x);       \
  CHECK_CONTIGUOUS(x)

namespace {

template <typename scalar_t>
__global__ void fused_bias_act_kernel(scalar_t *__restrict__ out, const scalar_t *__restrict__ in,
                                      const scalar_t *__restrict__ bias, const int64_t rows, const int64_t cols,
                                      const int act) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= rows * cols) return;
  scalar_t v = in[idx] + bias[idx % cols];
  switch (act) {
    case 1: v = v > scalar_t(0) ? v : scalar_t(0); break;
    case 2: v = v / (scalar_t(1) + ::exp(-v)); break;
    default: break;
  }
  out[idx] = v;
}

template <typename scalar_t, int kTopK>
__global__ void topk_gating_kernel(const scalar_t *__restrict__ logits, int *__restrict__ indices,
                                   float *__restrict__ weights, int num_experts) {
  const scalar_t *row = logits + blockIdx.x * num_experts;
  float best[kTopK];
  int best_idx[kTopK];
#pragma unroll
  for (int k = 0; k < kTopK; ++k) { best[k] = -INFINITY; best_idx[k] = -1; }
  for (int e = threadIdx.x; e < num_experts; e += blockDim.x) {
    float v = static_cast<float>(row[e]);
#pragma unroll
    for (int k = 0; k < kTopK; ++k) {
      if (v > best[k]) {
        for (int j = kTopK - 1; j > k; --j) { best[j] = best[j - 1]; best_idx[j] = best_idx[j - 1]; }
        best[k] = v; best_idx[k] = e;
        break;
      }
    }
  }
  if (threadIdx.x == 0) {
    float denom = 0.f;
    for (int k = 0; k < kTopK; ++k) denom += __expf(best[k]);
    for (int k = 0; k < kTopK; ++k) {
      indices[blockIdx.x * kTopK + k] = best_idx[k];
      weights[blockIdx.x * kTopK + k] = __expf(best[k]) / denom;
    }
  }
}

}  // namespace

torch::Tensor fused_bias_act(torch::Tensor input, torch::Tensor bias, int64_t act) {
  CHECK_INPUT(input);
  CHECK_INPUT(bias);
  TORCH_CHECK(input.dim() == 2, "input must be 2-D");
  const at::cuda::OptionalCUDAGuard device_guard(device_of(input));
  auto out = torch::empty_like(input);
  const int64_t rows = input.size(0), cols = input.size(1);
  const int threads = 256;
  const int64_t blocks = (rows * cols + threads - 1) / threads;
  AT_DISPATCH_FLOATING_TYPES_AND_HALF(input.scalar_type(), "fused_bias_act", ([&] {
    fused_bias_act_kernel<scalar_t><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        out.data_ptr<scalar_t>(), input.data_ptr<scalar_t>(), bias.data_ptr<scalar_t>(), rows, cols,
        static_cast<int>(act));
  }));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

std::vector<torch::Tensor> topk_gating(torch::Tensor logits, int64_t k) {
  CHECK_INPUT(logits);
  TORCH_CHECK(k == 2 || k == 4, "only top-2 and top-4 gating are compiled");
  auto opts = logits.options();
  auto idx = torch::empty({logits.size(0), k}, opts.dtype(torch::kInt32));
  auto w = torch::empty({logits.size(0), k}, opts.dtype(torch::kFloat32));
  AT_DISPATCH_FLOATING_TYPES(logits.scalar_type(), "topk_gating", [&] {
    if (k == 2)
      topk_gating_kernel<scalar_t, 2><<<logits.size(0), 128>>>(logits.data_ptr<scalar_t>(), idx.data_ptr<int>(), w.data_ptr<float>(), logits.size(1));
    else
      topk_gating_kernel<scalar_t, 4><<<logits.size(0), 128>>>(logits.data_ptr<scalar_t>(), idx.data_ptr<int>(), w.data_ptr<float>(), logits.size(1));
  });
  return {idx, w};
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("fused_bias_act", &fused_bias_act, "fused bias + activation (CUDA)");
  m.def("topk_gating", &topk_gating, "top-k gating (CUDA)");
}

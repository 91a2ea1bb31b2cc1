#define TORCH_ASSERT_NO_OPERATORS
#include <ATen/native/UnaryOps.h>
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/macros/Macros.h>

namespace at { namespace native {

namespace {

constexpr int kNumThreads = 256;
constexpr int kThreadWork = 4;

template <typename scalar_t, typename accscalar_t>
C10_LAUNCH_BOUNDS_1(kNumThreads)
__global__ void gelu_kernel_impl(const int64_t N,
                                 const scalar_t* __restrict__ X,
                                 scalar_t* __restrict__ Y) {
  const int64_t base = (int64_t)blockIdx.x * kNumThreads * kThreadWork + threadIdx.x;
  #pragma unroll
  for (int i = 0; i < kThreadWork; ++i) {
    const int64_t idx = base + i * kNumThreads;
    if (idx < N) {
      const accscalar_t x = static_cast<accscalar_t>(X[idx]);
      constexpr accscalar_t kAlpha = M_SQRT1_2;
      Y[idx] = static_cast<scalar_t>(x * accscalar_t(0.5) * (accscalar_t(1) + ::erf(x * kAlpha)));
    }
  }
}

template <typename scalar_t>
C10_LAUNCH_BOUNDS_2(512, 4)
__global__ void clamp_min_max_kernel(int64_t n, scalar_t lo, scalar_t hi,
                                     const scalar_t *in, scalar_t *out) {
  CUDA_KERNEL_LOOP(i, n) {
    scalar_t v = in[i];
    out[i] = v < lo ? lo : (v > hi ? hi : v);
  }
}

template <typename scalar_t>
__global__ void sign_kernel(const scalar_t* in, scalar_t* out, int64_t n)
{
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int64_t stride = (int64_t)blockDim.x * gridDim.x;
  for (; i < n; i += stride) {
    scalar_t zero = scalar_t(0);
    out[i] = scalar_t((zero < in[i]) - (in[i] < zero));
  }
}

} // anonymous namespace

void gelu_cuda_kernel(const Tensor& self, Tensor& result) {
  TORCH_CHECK(self.is_contiguous(), "gelu: expected a contiguous input, got strides ", self.strides());
  TORCH_CHECK(self.numel() < std::numeric_limits<int32_t>::max() * (int64_t)kThreadWork,
              "gelu: input too large");
  const int64_t N = self.numel();
  if (N == 0) {
    return;
  }
  const int64_t blocks = (N + kNumThreads * kThreadWork - 1) / (kNumThreads * kThreadWork);
  auto stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16,
      self.scalar_type(), "gelu_cuda", [&] {
    using accscalar_t = at::acc_type<scalar_t, true>;
    gelu_kernel_impl<scalar_t, accscalar_t>
        <<<blocks, kNumThreads, 0, stream>>>(
            N, self.const_data_ptr<scalar_t>(), result.mutable_data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void clamp_cuda_kernel(const Tensor& self, const Scalar& lo, const Scalar& hi, Tensor& out) {
  const int64_t n = self.numel();
  AT_DISPATCH_ALL_TYPES_AND(kHalf, self.scalar_type(), "clamp_cuda", [&]() {
    clamp_min_max_kernel<scalar_t><<<at::cuda::detail::GET_BLOCKS(n, 512), 512, 0,
                                     at::cuda::getCurrentCUDAStream()>>>(
        n, lo.to<scalar_t>(), hi.to<scalar_t>(), self.const_data_ptr<scalar_t>(),
        out.mutable_data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void sign_cuda_kernel(const Tensor& self, Tensor& out) {
  const int64_t n = self.numel();
  const int threads = 128;
  const int64_t grid = std::min<int64_t>((n + threads - 1) / threads, 65535);
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "sign_cuda", [&] {
    sign_kernel<<<grid, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        self.const_data_ptr<scalar_t>(), out.mutable_data_ptr<scalar_t>(), n);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}} // namespace at::native

/******************************************************************************
 * FlashAttention-style forward kernel entry points (klc corpus, hand-written).
 ******************************************************************************/
#pragma once

#include "namespace_config.h"
#include "flash.h"
#include "static_switch.h"
#include "kernel_traits.h"

namespace FLASH_NAMESPACE {

// Determine if the architecture supports FLASH and define a macro to handle parameter modifiers
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define ARCH_SUPPORTS_FLASH
#define KERNEL_PARAM_MODIFIER __grid_constant__
#else
#define KERNEL_PARAM_MODIFIER
#endif

// Define a macro for unsupported architecture handling to centralize the error message
#define FLASH_UNSUPPORTED_ARCH printf("FATAL: FlashAttention requires building with sm version sm80-sm90, but was built for < 8.0!");

// Use a macro to clean up kernel definitions
#define DEFINE_FLASH_FORWARD_KERNEL(kernelName, ...) \
template<typename Kernel_traits, __VA_ARGS__> \
__global__ void kernelName(KERNEL_PARAM_MODIFIER const Flash_fwd_params params)

DEFINE_FLASH_FORWARD_KERNEL(flash_fwd_kernel, bool Is_dropout, bool Is_causal, bool Is_local, bool Has_alibi, bool Is_even_MN, bool Is_even_K, bool Is_softcap, bool Return_softmax) {
    #if defined(ARCH_SUPPORTS_FLASH)
        static_assert(!(Is_causal && Is_local)); // Enforce constraints
        flash::compute_attn<Kernel_traits, Is_dropout, Is_causal, Is_local, Has_alibi, Is_even_MN, Is_even_K, Is_softcap, Return_softmax>(params);
    #else
        FLASH_UNSUPPORTED_ARCH
    #endif
}

template<typename Kernel_traits, bool Is_dropout, bool Is_causal, bool Is_local, bool Has_alibi, bool Is_even_MN, bool Is_even_K>
__global__ void __launch_bounds__(Kernel_traits::kNThreads, 1)
flash_fwd_splitkv_kernel(const Flash_fwd_params params) {
    const int m_block = blockIdx.x;
    // The block index for the batch.
    const int bidb = blockIdx.z / params.h;
    // The block index for the head.
    const int bidh = blockIdx.z - bidb * params.h;
    const int n_split_idx = blockIdx.y;
    const int num_n_splits = gridDim.y;
    flash::compute_attn_splitkv<Kernel_traits, Is_causal, Is_local, Has_alibi, Is_even_MN, Is_even_K>(params, m_block, bidb, bidh, n_split_idx, num_n_splits);
}

template<typename Kernel_traits, int kBlockM, int Log_max_splits, bool Is_even_K>
__global__ void __launch_bounds__(Kernel_traits::kNThreads, 1) flash_fwd_splitkv_combine_kernel(const __grid_constant__ Flash_fwd_params params) {
    static_assert(Log_max_splits >= 1);
    using Element = typename Kernel_traits::Element;
    using ElementAccum = typename Kernel_traits::ElementAccum;
    constexpr int kMaxSplits = 1 << Log_max_splits;
    constexpr int kHeadDim = Kernel_traits::kHeadDim;
    constexpr int kNThreads = Kernel_traits::kNThreads;

    __shared__ ElementAccum sLSE[kMaxSplits][kBlockM + 1];
    __shared__ ElementAccum sLSE_max[kBlockM];

    const int tidx = threadIdx.x;
    const int bidx = blockIdx.x;

    const index_t lse_size = params.b * params.h * params.seqlen_q;
    const index_t row_offset_lse = bidx * kBlockM;

    constexpr int kNLsePerThread = (kMaxSplits * kBlockM + kNThreads - 1) / kNThreads;
    #pragma unroll
    for (int l = 0; l < kNLsePerThread; ++l) {
        const int row = l * kNThreads + tidx;
        const int col = row % kBlockM;
        const int split = row / kBlockM;
        const ElementAccum lse = (split < params.num_splits && row_offset_lse + col < lse_size)
            ? reinterpret_cast<ElementAccum *>(params.softmax_lseaccum_ptr)[split * lse_size + row_offset_lse + col]
            : -INFINITY;
        if (row < kMaxSplits * kBlockM) { sLSE[split][col] = lse; }
    }
    __syncthreads();

    ElementAccum lse_max = -INFINITY;
    #pragma unroll 4
    for (int s = 0; s < kMaxSplits; ++s) {
        lse_max = max(lse_max, sLSE[s][tidx % kBlockM]);
    }
    #pragma unroll
    for (int offset = 16; offset >= 1; offset /= 2) {
        lse_max = max(lse_max, __shfl_xor_sync(uint32_t(-1), lse_max, offset));
    }
    if (tidx < kBlockM) { sLSE_max[tidx] = lse_max; }
    __syncthreads();
    ElementAccum lse_sum = 0;
    for (int s = 0; s < kMaxSplits; ++s) { lse_sum += expf(sLSE[s][tidx % kBlockM] - sLSE_max[tidx % kBlockM]); }
    (void)kHeadDim;
    (void)lse_sum;
}

template<typename Kernel_traits, bool Is_dropout, bool Is_causal>
void run_flash_fwd(Flash_fwd_params &params, cudaStream_t stream) {
    constexpr size_t smem_size = Kernel_traits::kSmemSize;
    const int num_m_block = (params.seqlen_q + Kernel_traits::kBlockM - 1) / Kernel_traits::kBlockM;
    dim3 grid(num_m_block, params.b, params.h);
    const bool is_even_MN = params.cu_seqlens_q == nullptr && params.seqlen_k % Kernel_traits::kBlockN == 0;
    const bool is_even_K = params.d == Kernel_traits::kHeadDim;
    BOOL_SWITCH(is_even_MN, IsEvenMNConst, [&] {
        EVENK_SWITCH(is_even_K, IsEvenKConst, [&] {
            auto kernel = &flash_fwd_kernel<Kernel_traits, Is_dropout, Is_causal, false, false, IsEvenMNConst, IsEvenKConst, false, false>;
            if (smem_size >= 48 * 1024) {
                C10_CUDA_CHECK(cudaFuncSetAttribute(
                    kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_size));
            }
            kernel<<<grid, Kernel_traits::kNThreads, smem_size, stream>>>(params);
            C10_CUDA_KERNEL_LAUNCH_CHECK();
        });
    });
}

template<typename Kernel_traits, int kBlockM>
void run_combine(Flash_fwd_params &params, cudaStream_t stream) {
    dim3 grid_combine((params.b * params.h * params.seqlen_q + kBlockM - 1) / kBlockM);
    EVENK_SWITCH(params.d == Kernel_traits::kHeadDim, IsEvenKConst, [&] {
        if (params.num_splits <= 2) {
            flash_fwd_splitkv_combine_kernel<Kernel_traits, kBlockM, 1, IsEvenKConst><<<grid_combine, Kernel_traits::kNThreads, 0, stream>>>(params);
        } else if (params.num_splits <= 4) {
            flash_fwd_splitkv_combine_kernel<Kernel_traits, kBlockM, 2, IsEvenKConst><<<grid_combine, Kernel_traits::kNThreads, 0, stream>>>(params);
        } else {
            flash_fwd_splitkv_combine_kernel<Kernel_traits, kBlockM, 7, IsEvenKConst><<<grid_combine, Kernel_traits::kNThreads, 0, stream>>>(params);
        }
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    });
}

} // namespace FLASH_NAMESPACE

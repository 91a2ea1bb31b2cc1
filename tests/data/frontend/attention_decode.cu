// Paged-attention decode kernels with project-local launch-bounds macros.
#include <cuda_fp16.h>
#include <float.h>
#include <stdint.h>

#define MY_LB(n) __launch_bounds__(n)
#define KLC_KERNEL_LB(threads, blocks) __launch_bounds__(threads, blocks)
#define WARP_SIZE 32
#define DIVIDE_ROUND_UP(a, b) (((a) + (b) - 1) / (b))
#define VLLM_LDG(arg) __ldg(arg)

namespace vllm_like {

template <int NUM_WARPS>
inline __device__ float block_sum(float *red_smem, float sum) {
  int warp = threadIdx.x / WARP_SIZE;
  int lane = threadIdx.x % WARP_SIZE;
#pragma unroll
  for (int mask = WARP_SIZE / 2; mask >= 1; mask /= 2) sum += __shfl_xor_sync(uint32_t(-1), sum, mask);
  if (lane == 0) red_smem[warp] = sum;
  __syncthreads();
  if (lane < NUM_WARPS) sum = red_smem[lane];
#pragma unroll
  for (int mask = NUM_WARPS / 2; mask >= 1; mask /= 2) sum += __shfl_xor_sync(uint32_t(-1), sum, mask);
  return __shfl_sync(uint32_t(-1), sum, 0);
}

template <typename scalar_t, int HEAD_SIZE, int BLOCK_SIZE, int NUM_THREADS>
__global__ MY_LB(NUM_THREADS) void paged_attention_v1_kernel(
    scalar_t *__restrict__ out,              // [num_seqs, num_heads, head_size]
    const scalar_t *__restrict__ q,          // [num_seqs, num_heads, head_size]
    const scalar_t *__restrict__ k_cache,    // [num_blocks, num_kv_heads, head_size/x, block_size, x]
    const scalar_t *__restrict__ v_cache,    // [num_blocks, num_kv_heads, head_size, block_size]
    const int num_kv_heads,
    const float scale,
    const int *__restrict__ block_tables,    // [num_seqs, max_num_blocks_per_seq]
    const int *__restrict__ seq_lens,        // [num_seqs]
    const int max_num_blocks_per_seq) {
  const int seq_idx = blockIdx.y;
  const int head_idx = blockIdx.x;
  const int seq_len = seq_lens[seq_idx];
  constexpr int NUM_WARPS = NUM_THREADS / WARP_SIZE;
  const int num_seq_blocks = DIVIDE_ROUND_UP(seq_len, BLOCK_SIZE);
  extern __shared__ char shared_mem[];
  float *logits = reinterpret_cast<float *>(shared_mem);
  __shared__ float red_smem[2 * NUM_WARPS];
  const int *block_table = block_tables + seq_idx * max_num_blocks_per_seq;
  float qk_max = -FLT_MAX;
  for (int block_idx = threadIdx.x / WARP_SIZE; block_idx < num_seq_blocks; block_idx += NUM_WARPS) {
    const int64_t physical_block_number = static_cast<int64_t>(block_table[block_idx]);
    for (int i = 0; i < BLOCK_SIZE; ++i) {
      const int token_idx = block_idx * BLOCK_SIZE + i;
      float qk = 0.f;
#pragma unroll
      for (int d = threadIdx.x % WARP_SIZE; d < HEAD_SIZE; d += WARP_SIZE) {
        qk += float(q[seq_idx * HEAD_SIZE + d]) *
              float(VLLM_LDG(&k_cache[(physical_block_number * num_kv_heads) * HEAD_SIZE * BLOCK_SIZE + d * BLOCK_SIZE + i]));
      }
      qk = scale * qk;
      if (threadIdx.x % WARP_SIZE == 0 && token_idx < seq_len) logits[token_idx] = qk;
      qk_max = token_idx < seq_len ? fmaxf(qk_max, qk) : qk_max;
    }
  }
  float exp_sum = 0.f;
  for (int i = threadIdx.x; i < seq_len; i += NUM_THREADS) {
    float val = __expf(logits[i] - qk_max);
    logits[i] = val;
    exp_sum += val;
  }
  exp_sum = block_sum<NUM_WARPS>(&red_smem[NUM_WARPS], exp_sum);
  const float inv_sum = __fdividef(1.f, exp_sum + 1e-6f);
  for (int i = threadIdx.x; i < HEAD_SIZE; i += NUM_THREADS) {
    float acc = 0.f;
    for (int t = 0; t < seq_len; ++t) acc += logits[t] * inv_sum * float(v_cache[i * BLOCK_SIZE + t % BLOCK_SIZE]);
    out[(seq_idx * gridDim.x + head_idx) * HEAD_SIZE + i] = scalar_t(acc);
  }
}

template <typename scalar_t, int HEAD_SIZE, int NUM_THREADS, int PARTITION_SIZE>
__global__ KLC_KERNEL_LB(NUM_THREADS, 2) void paged_attention_v2_reduce_kernel(
    scalar_t *__restrict__ out, const float *__restrict__ exp_sums, const float *__restrict__ max_logits,
    const scalar_t *__restrict__ tmp_out, const int *__restrict__ seq_lens, const int max_num_partitions) {
  const int num_heads = gridDim.x;
  const int head_idx = blockIdx.x;
  const int seq_idx = blockIdx.y;
  const int seq_len = seq_lens[seq_idx];
  const int num_partitions = DIVIDE_ROUND_UP(seq_len, PARTITION_SIZE);
  extern __shared__ char shared_mem[];
  __shared__ float red_smem[2 * (NUM_THREADS / WARP_SIZE)];
  float *shared_max_logits = reinterpret_cast<float *>(shared_mem);
  const float *max_logits_ptr = max_logits + seq_idx * num_heads * max_num_partitions + head_idx * max_num_partitions;
  float max_logit = -FLT_MAX;
  for (int i = threadIdx.x; i < num_partitions; i += blockDim.x) {
    const float l = max_logits_ptr[i];
    shared_max_logits[i] = l;
    max_logit = fmaxf(max_logit, l);
  }
  __syncthreads();
  (void)exp_sums; (void)tmp_out; (void)out; (void)red_smem; (void)max_logit;
}

__global__ MY_LB(256) void kv_cache_copy(const half2 *__restrict__ src, half2 *__restrict__ dst, const int64_t *__restrict__ mapping, int n) {
  const int64_t pair = blockIdx.x;
  const int64_t s = mapping[2 * pair], d = mapping[2 * pair + 1];
  for (int i = threadIdx.x; i < n; i += blockDim.x) dst[d * n + i] = src[s * n + i];
}

}  // namespace vllm_like

// Thread-block clusters, register caps and distributed shared memory (sm_90).
#include <cooperative_groups.h>
#include <cuda/barrier>

namespace cg = cooperative_groups;

__global__ void __cluster_dims__(2, 1, 1) cluster_hist_kernel(int *bins, const int nbins, const int bins_per_block,
                                                              const int *__restrict__ input, size_t array_size)
{
  extern __shared__ int smem[];
  namespace cg = cooperative_groups;
  int tid = cg::this_grid().thread_rank();

  cg::cluster_group cluster = cg::this_cluster();
  unsigned int clusterBlockRank = cluster.block_rank();
  int cluster_size = cluster.dim_blocks().x;

  for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x)
  {
    smem[i] = 0;
  }

  cluster.sync();

  for (int i = tid; i < array_size; i += blockDim.x * gridDim.x)
  {
    int ldata = input[i];
    int binid = ldata;
    if (ldata < 0)
      binid = 0;
    else if (ldata >= nbins)
      binid = nbins - 1;

    int dst_block_rank = (int)(binid / bins_per_block);
    int dst_offset = binid % bins_per_block;

    int *dst_smem = cluster.map_shared_rank(smem, dst_block_rank);

    atomicAdd(dst_smem + dst_offset, 1);
  }

  cluster.sync();

  int *lbins = bins + cluster.block_rank() * bins_per_block;
  for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x)
  {
    atomicAdd(&lbins[i], smem[i]);
  }
  (void)clusterBlockRank; (void)cluster_size;
}

__global__ void __maxnreg__(64) low_reg_saxpy(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}

__global__ void __launch_bounds__(384, 1) __cluster_dims__(1, 2, 1)
tma_like_producer_consumer(const float4 *__restrict__ src, float4 *__restrict__ dst, int tiles)
{
  __shared__ __align__(128) float4 stage[2][128];
  __shared__ uint64_t full_barrier[2], empty_barrier[2];
  const int warp_group = threadIdx.x / 128;
  if (warp_group == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::);
    for (int t = 0; t < tiles; ++t) {
      stage[t & 1][threadIdx.x % 128] = src[t * 128 + threadIdx.x % 128];
      __syncwarp();
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::);
    for (int t = 0; t < tiles; ++t) {
      float4 v = stage[t & 1][threadIdx.x % 128];
      v.x *= 2.f; v.y *= 2.f; v.z *= 2.f; v.w *= 2.f;
      dst[t * 128 + threadIdx.x % 128] = v;
    }
  }
  (void)full_barrier; (void)empty_barrier;
}

template <int kClusterX>
__global__ void __cluster_dims__(kClusterX, 1, 1) __maxnreg__(128)
dsmem_reduce(const float *__restrict__ in, float *__restrict__ out)
{
  __shared__ float partial[32];
  auto cluster = cg::this_cluster();
  auto block = cg::this_thread_block();
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  auto warp = cg::tiled_partition<32>(block);
  v = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = v;
  block.sync();
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x < kClusterX) {
    float *remote = cluster.map_shared_rank(partial, threadIdx.x);
    atomicAdd(out, remote[0]);
  }
  cluster.sync();
}

void launch_cluster_hist(int *bins, const int *in, size_t n, cudaStream_t stream) {
  cudaLaunchConfig_t config = {0};
  config.gridDim = 64;
  config.blockDim = 256;
  config.dynamicSmemBytes = 4096 * sizeof(int);
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = 2;
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  cudaLaunchKernelEx(&config, cluster_hist_kernel, bins, 8192, 4096, in, n);
  low_reg_saxpy<<<128, 256, 0, stream>>>(2.0f, (const float *)in, (float *)bins, (int)n);
  dsmem_reduce<4><<<dim3(64), dim3(256), 0, stream>>>((const float *)in, (float *)bins);
}

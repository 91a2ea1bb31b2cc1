#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/memcpy_async.h>
#include <cstdio>

namespace cg = cooperative_groups;

__device__ int reduce_sum(cg::thread_group g, int *temp, int val)
{
    int lane = g.thread_rank();

    // Each iteration halves the number of active threads
    // Each thread adds its partial sum[i] to sum[lane+i]
    for (int i = g.size() / 2; i > 0; i /= 2)
    {
        temp[lane] = val;
        g.sync(); // wait for all threads to store
        if(lane<i) val += temp[lane + i];
        g.sync(); // wait for all threads to load
    }
    return val; // note: only thread 0 will return full sum
}

__device__ int thread_sum(int *input, int n)
{
    int sum = 0;

    for(int i = blockIdx.x * blockDim.x + threadIdx.x;
        i < n / 4;
        i += blockDim.x * gridDim.x)
    {
        int4 in = ((int4*)input)[i];
        sum += in.x + in.y + in.z + in.w;
    }
    return sum;
}

__global__ void sum_kernel_block(int *sum, int *input, int n)
{
    int my_sum = thread_sum(input, n);

    extern __shared__ int temp[];
    auto g = cg::this_thread_block();
    int block_sum = reduce_sum(g, temp, my_sum);

    if (g.thread_rank() == 0) atomicAdd(sum, block_sum);
}

template <int tile_sz>
__device__ int reduce_sum_tile_shfl(cg::thread_block_tile<tile_sz> g, int val)
{
    // Each iteration halves the number of active threads
    // Each thread adds its partial sum[i] to sum[lane+i]
    for (int i = g.size() / 2; i > 0; i /= 2) {
        val += g.shfl_down(val, i);
    }

    return val; // note: only thread 0 will return full sum
}

template<int tile_sz>
__global__ void sum_kernel_tile_shfl(int *sum, int *input, int n)
{
    int my_sum = thread_sum(input, n);

    auto tile = cg::tiled_partition<tile_sz>(cg::this_thread_block());
    int tile_sum = reduce_sum_tile_shfl<tile_sz>(tile, my_sum);

    if (tile.thread_rank() == 0) atomicAdd(sum, tile_sum);
}

__global__ void grid_sync_kernel(float *data, float *partials, int n)
{
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);

    float v = 0.0f;
    for (int i = grid.thread_rank(); i < n; i += grid.size())
        v += data[i];
    v = cg::reduce(warp, v, cg::plus<float>());
    if (warp.thread_rank() == 0)
        atomicAdd(&partials[blockIdx.x], v);
    grid.sync();
    if (grid.thread_rank() == 0) {
        float total = 0.0f;
        for (int b = 0; b < gridDim.x; ++b) total += partials[b];
        data[0] = total;
    }
}

__global__ void async_copy_kernel(const float *__restrict__ global_in, float *__restrict__ out, size_t elems)
{
    extern __shared__ float shared_tile[];
    auto block = cg::this_thread_block();
    cg::memcpy_async(block, shared_tile, global_in + blockIdx.x * elems, sizeof(float) * elems);
    cg::wait(block);
    auto active = cg::coalesced_threads();
    float v = shared_tile[threadIdx.x];
    v = active.shfl(v, 0) + v;
    if (active.any(v > 0.f)) out[blockIdx.x * blockDim.x + threadIdx.x] = v;
    unsigned vote = active.ballot(v < 0.f);
    if (vote && active.thread_rank() == 0) printf("block %d has negatives\n", blockIdx.x);
}

int main(int argc, char **argv)
{
    int n = 1 << 24;
    int blockSize = 256;
    int nBlocks = (n + blockSize - 1) / blockSize;
    int sharedBytes = blockSize * sizeof(int);

    int *sum, *data;
    cudaMallocManaged(&sum, sizeof(int));
    cudaMallocManaged(&data, n * sizeof(int));
    std::fill_n(data, n, 1); // initialize data
    cudaMemset(sum, 0, sizeof(int));

    sum_kernel_block<<<nBlocks, blockSize, sharedBytes>>>(sum, data, n);
    sum_kernel_tile_shfl<32><<<nBlocks, blockSize>>>(sum, data, n);

    void *args[] = {&data, &sum, &n};
    cudaLaunchCooperativeKernel((void *)grid_sync_kernel, nBlocks, blockSize, args, 0, 0);
    cudaDeviceSynchronize();
    return 0;
}

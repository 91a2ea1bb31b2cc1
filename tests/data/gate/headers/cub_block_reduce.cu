// A block maximum with CUB's BlockReduce, as a templated kernel.
#include <cub/block/block_reduce.cuh>

template <int BLOCK>
__global__ void block_max(const float* __restrict__ x, float* __restrict__ out, int n) {
    using Reduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename Reduce::TempStorage scratch;
    int i = blockIdx.x * BLOCK + threadIdx.x;
    float v = i < n ? x[i] : -INFINITY;
    float m = Reduce(scratch).Reduce(v, cuda::maximum<float>{});
    if (threadIdx.x == 0) out[blockIdx.x] = m;
}

template __global__ void block_max<256>(const float*, float*, int);

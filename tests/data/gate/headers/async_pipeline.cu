// Stage a tile in shared memory with cuda::pipeline and cuda::memcpy_async.
#include <cuda/pipeline>
#include <cooperative_groups.h>

__global__ void staged_copy(const float* __restrict__ x, float* __restrict__ y, int n) {
    __shared__ float tile[256];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    int i = blockIdx.x * 256 + threadIdx.x;
    pipe.producer_acquire();
    if (i < n) cuda::memcpy_async(&tile[threadIdx.x], &x[i], sizeof(float), pipe);
    pipe.producer_commit();
    pipe.consumer_wait();
    if (i < n) y[i] = 2.0f * tile[threadIdx.x];
    pipe.consumer_release();
}

// The unrolled last warp of a 512-thread tree folds back into the loop.
__global__ void __launch_bounds__(512) block_sum(const float* __restrict__ x, float* out, int n) {
    __shared__ float red[512];
    float acc = 0.0f;
    int i = blockIdx.x * 512 + threadIdx.x;
    if (i < n) {
        acc = x[i];
    }
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = 512 / 2; stride > 32; stride >>= 1) {
        if (threadIdx.x < stride) {
            red[threadIdx.x] += red[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        acc = red[threadIdx.x] + red[threadIdx.x + 32];
        __syncwarp();
        red[threadIdx.x] = acc;
        __syncwarp();
        acc += red[threadIdx.x + 16];
        __syncwarp();
        red[threadIdx.x] = acc;
        __syncwarp();
        acc += red[threadIdx.x + 8];
        __syncwarp();
        red[threadIdx.x] = acc;
        __syncwarp();
        acc += red[threadIdx.x + 4];
        __syncwarp();
        red[threadIdx.x] = acc;
        __syncwarp();
        acc += red[threadIdx.x + 2];
        __syncwarp();
        red[threadIdx.x] = acc;
        __syncwarp();
        acc += red[threadIdx.x + 1];
    }
    if (threadIdx.x == 0) {
        atomicAdd(out, acc);
    }
}

// 192 is not a power of two: the halving loop would not end with the total in red[0].
__global__ void __launch_bounds__(192) block_sum(const float* __restrict__ x, float* out, int n) {
    __shared__ float red[192];
    float acc = 0.0f;
    int i = blockIdx.x * 192 + threadIdx.x;
    if (i < n) {
        acc = x[i];
    }
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = 192 / 2; stride > 32; stride >>= 1) {
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

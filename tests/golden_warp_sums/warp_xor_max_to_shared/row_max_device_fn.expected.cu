// A warp maximum in a device function, written with max.
__device__ float warp_max(float m) {
    {
        __shared__ decltype(0 + m) klc_lanes[1024];
        const int klc_t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        __syncwarp(0xffffffffu);
        klc_lanes[klc_t] = m;
        __syncwarp(0xffffffffu);
        for (int o = 0; o < 32; o++) {
            m = max(m, klc_lanes[(klc_t & ~31) + o]);
        }
        __syncwarp(0xffffffffu);
    }
    return m;
}

__global__ void row_max(const float* x, float* y) {
    float m = x[blockIdx.x * 32 + threadIdx.x];
    {
        __shared__ decltype(0 + m) klc_lanes[1024];
        const int klc_t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        __syncwarp(0xffffffffu);
        klc_lanes[klc_t] = m;
        __syncwarp(0xffffffffu);
        for (int o = 0; o < 32; o++) {
            m = max(m, klc_lanes[(klc_t & ~31) + o]);
        }
        __syncwarp(0xffffffffu);
    }
    if (threadIdx.x == 0) y[blockIdx.x] = m;
}

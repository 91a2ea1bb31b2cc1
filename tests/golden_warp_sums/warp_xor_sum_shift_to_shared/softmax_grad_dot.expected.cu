// The dot product of a softmax gradient, offsets shifted up to the warp size.
template <int ITER>
__global__ void softmax_grad(float* grad, const float* out, int len) {
    const int row = blockIdx.x * blockDim.y + threadIdx.y;
    float g[ITER], o[ITER];
    float sum = 0.0f;
    for (int i = 0; i < ITER; i++) {
        g[i] = grad[row * len + threadIdx.x + 32 * i];
        o[i] = out[row * len + threadIdx.x + 32 * i];
        sum += g[i] * o[i];
    }
    {
        __shared__ decltype(0 + sum) klc_lanes[1024];
        const int klc_t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        __syncwarp(0xffffffff);
        klc_lanes[klc_t] = sum;
        __syncwarp(0xffffffff);
        sum = 0;
        for (int i = 0; i < 32; i++) {
            sum += klc_lanes[(klc_t & ~31) + i];
        }
        __syncwarp(0xffffffff);
    }
    for (int i = 0; i < ITER; i++) grad[row * len + threadIdx.x + 32 * i] = o[i] * (g[i] - sum);
}

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
    for (int i = 1; i < 32; i <<= 1) sum += __shfl_xor_sync(0xffffffff, sum, i);
    for (int i = 0; i < ITER; i++) grad[row * len + threadIdx.x + 32 * i] = o[i] * (g[i] - sum);
}

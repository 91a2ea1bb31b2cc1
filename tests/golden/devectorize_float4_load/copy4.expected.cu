__global__ void copy4(const float* __restrict__ x, float* __restrict__ y, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = make_float4(x[4 * (i) + 0], x[4 * (i) + 1], x[4 * (i) + 2], x[4 * (i) + 3]);
        reinterpret_cast<float4*>(y)[i] = v;
    }
}

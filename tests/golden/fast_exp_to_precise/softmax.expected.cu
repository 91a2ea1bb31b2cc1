__global__ void softmax_row(const float* x, float* y, int n) {
    const float* row = x + blockIdx.x * n;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, row[i]);
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        y[blockIdx.x * n + i] = expf(row[i] - m) + expf(0.0f * m);
}

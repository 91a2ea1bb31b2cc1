__global__ void softmax_row(const float* x, float* y, int n) {
    const float* row = x + blockIdx.x * n;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, row[i]);
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        y[blockIdx.x * n + i] = __expf(row[i] - m) + __expf(0.0f * m);
}

// x and y are subscripted: both lose __restrict__; total is only an atomic target (another rule).
__global__ void scale(const float* x, float* y, float* total, int n, float a) {
    const float* row = x + blockIdx.y * n;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 4) {
        float4 v = reinterpret_cast<const float4*>(row)[i];
        reinterpret_cast<float4*>(y)[i] = make_float4(a * v.x, a * v.y, a * v.z, a * v.w);
        atomicAdd(total, v.x);
    }
    float local[4];
    local[0] = x[i];
    y[i] = local[0];
}

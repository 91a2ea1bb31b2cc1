// GELU over rows of float4: the loads and the store go through one float4 alias each.
__device__ float gelu_approx(float x) {
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

__global__ void gelu_rows(float* vals, int row_stride, int iterations) {
    float4* v4 = reinterpret_cast<float4*>(vals);
    for (int i = 0; i < iterations; i++) {
        int c = i * blockDim.x + threadIdx.x;
        if (c < row_stride) {
            float4 d = v4[blockIdx.x * row_stride + c];
            d.x = gelu_approx(d.x);
            d.y = gelu_approx(d.y);
            d.z = gelu_approx(d.z);
            d.w = gelu_approx(d.w);
            v4[blockIdx.x * row_stride + c] = d;
        }
    }
}

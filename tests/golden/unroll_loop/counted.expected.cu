__global__ void dot8(const float* a, const float* b, float* out, int n) {
    float acc = 0.0f;
    #pragma unroll 8
    for (int k = 0; k < 8; ++k) {
        acc += a[threadIdx.x * 8 + k] * b[k];
    }
    out[threadIdx.x] = acc;
}

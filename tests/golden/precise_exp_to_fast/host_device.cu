__host__ __device__ inline float gelu_tanh(float x) {
    return 0.5f * x * (1.0f + tanhf(0.79788456f * (x + 0.044715f * x * x * x))) * expf(0.0f);
}

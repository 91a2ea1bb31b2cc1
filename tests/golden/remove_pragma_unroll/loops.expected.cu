__global__ void dot8(const float* a, const float* b, float* out) {
    float acc = 0.0f;
    for (int k = 0; k < 8; ++k) {
        acc += a[threadIdx.x * 8 + k] * b[k];
    }
    for (int j = 0; j < 4; j++) acc *= 0.5f;
    for (int j = 0; j < 2; j++) acc += 1.0f;   // no pragma: untouched
    out[threadIdx.x] = acc;
}

__global__ void sum4(const float* x, float* out) {
    float acc = 0.0f;
    for (int i = 0; i < 4; i++)
        acc += x[4 * threadIdx.x + i];   // one statement, no braces
    out[threadIdx.x] = acc;
}

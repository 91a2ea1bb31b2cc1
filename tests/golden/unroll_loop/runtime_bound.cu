__global__ void rowsum(const float* a, float* out, int n) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) acc += a[blockIdx.x * n + k];
    out[blockIdx.x] = acc;
}

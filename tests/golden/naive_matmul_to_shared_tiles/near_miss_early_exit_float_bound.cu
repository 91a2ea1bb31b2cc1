// A near miss: the early return compares a float (a NaN fails both r >= lim and r < lim),
// so `if (r >= lim || c >= N) return;` is not the wrapped `if (r < lim && c < N)`.
__global__ void gemm_float_bound(float* out, const float* a, const float* b, float lim,
                                 int M, int N, int K) {
    int r = threadIdx.y + blockIdx.y * blockDim.y;
    int c = threadIdx.x + blockIdx.x * blockDim.x;
    if (r >= lim || c >= N) return;
    float s = 0.f;
    for (int i = 0; i < K; ++i) {
        s += a[r * K + i] * b[i * N + c];
    }
    out[r * N + c] = s;
}
void run_float_bound(float* out, const float* a, const float* b, int M, int N, int K) {
    dim3 block(16, 16);
    dim3 grid((N + 15) / 16, (M + 15) / 16);
    gemm_float_bound<<<grid, block>>>(out, a, b, (float)M, M, N, K);
}

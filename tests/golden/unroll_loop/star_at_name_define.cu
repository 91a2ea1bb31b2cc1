#define TAPS 8
__global__ void fir(float *out, const float *in, const float *w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + TAPS > n) return;
    float acc = 0.0f;
    for (int t = 0; t < TAPS; ++t)
        acc += w[t] * in[i + t];
    out[i] = acc;
}

__global__ void silu(float *out, const float *inp, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) { return; }
    float v = inp[i];
    out[i] = v / (1.0f + expf(-v));
}

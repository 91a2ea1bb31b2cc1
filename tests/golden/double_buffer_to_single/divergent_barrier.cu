// A barrier under a thread-dependent branch in the loop: adding one more is unsafe. Refused.
__global__ void k(const float* __restrict__ x, float* __restrict__ y, int steps) {
    __shared__ float s[2][256];
    int buf = 0;
    for (int t = 0; t < steps; ++t) {
        s[buf][threadIdx.x] = x[t * 256 + threadIdx.x];
        if (threadIdx.x < 128) {
            __syncthreads();
        }
        y[t * 256 + threadIdx.x] = s[buf][255 - threadIdx.x];
        buf ^= 1;
    }
}

// No spec, but a 64-bit index: i + blockDim.x * gridDim.x cannot overflow it.
__global__ void relu_(float* __restrict__ out, const float* __restrict__ in, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

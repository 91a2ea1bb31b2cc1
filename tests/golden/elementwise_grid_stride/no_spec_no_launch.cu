// No spec and no launch in this file (the caller is elsewhere): the rewrite divides the
// grid, which klc could record nowhere, so the callers would launch the new kernel with the
// old grid. A 64-bit index: stride_fits alone would allow it.
__global__ void relu_(float* __restrict__ out, const float* __restrict__ in, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

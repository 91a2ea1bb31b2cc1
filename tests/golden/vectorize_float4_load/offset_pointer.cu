// x + 1 is not 16-byte aligned: the vector load would fault.
__global__ void copy4(const float* __restrict__ x, float* __restrict__ y, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* xs = x + 1;
    if (i < n4) {
        float4 v = make_float4(xs[4 * (i) + 0], xs[4 * (i) + 1], xs[4 * (i) + 2], xs[4 * (i) + 3]);
        reinterpret_cast<float4*>(y)[i] = v;
    }
}

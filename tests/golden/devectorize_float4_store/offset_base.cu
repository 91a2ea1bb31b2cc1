// The base is an expression, not a name: y + 1[...] would be wrong, the rule must refuse.
__global__ void scale4(float* __restrict__ y, float a, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = make_float4(a, a, a, a);
    if (i < n4) {
        reinterpret_cast<float4*>(y + 4 * n4)[i] = v;
    }
}

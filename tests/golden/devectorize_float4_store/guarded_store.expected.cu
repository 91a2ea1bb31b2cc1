// The store is the body of an if: the four scalar stores stay under it, as a block.
__global__ void scale4(const float* __restrict__ x, float* __restrict__ y, float a, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = make_float4(a, a, a, a);
    if (i < n4)
        {
            y[4 * (i) + 0] = v.x;
            y[4 * (i) + 1] = v.y;
            y[4 * (i) + 2] = v.z;
            y[4 * (i) + 3] = v.w;
        }
}

// y is written only through a float4 cast.
__global__ void fill4(float* __restrict__ y, float v, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        reinterpret_cast<float4*>(y)[i] = make_float4(v, v, v, v);
    }
}

__global__ void shift(float *d_Dst, float *d_Input, int base) {
    float *d_Src = d_Input + base;
    d_Dst[threadIdx.x] = d_Src[threadIdx.x];
    d_Dst[threadIdx.x + 1] = d_Input[threadIdx.x];
}

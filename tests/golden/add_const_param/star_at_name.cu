#define BLOCK 256
__global__ void copy_scaled(float *out, float *in, float alpha, int n)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n)
        return;
    out[i] = alpha * in[i];
}

// A scale kernel as a library ships it, without a klc-spec: the index is a 32-bit int and
// nothing bounds n, so a grid-stride step i += blockDim.x * gridDim.x could pass INT_MAX on
// an array of nearly 2^31 elements, where the one-element-per-thread kernel never adds it.
__global__ void scale_inplace(float *v, float a, int n)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n)
        v[idx] = a * v[idx];
}

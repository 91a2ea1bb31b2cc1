// `depth` is an int: a pointer rule does not bind it, so this is no match at all
__global__ void offset_rows(float *out, const int depth, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)(i + depth);
}

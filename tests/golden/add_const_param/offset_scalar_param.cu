// `depth` is an int: a pointer rule does not bind it (the only match, `out[i]`, is refused: `out` is written)
__global__ void offset_rows(float *out, const int depth, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)(i + depth);
}

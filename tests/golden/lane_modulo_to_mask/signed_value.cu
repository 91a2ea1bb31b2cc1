// The remainder of a signed value that may be negative: a mask would differ.
__global__ void wrap(int* out, const int* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] % 32;
    }
}

// A shifted value that may be negative is not a thread index: no rewrite.
__global__ void halves(const int* x, int* y) {
    y[threadIdx.x] = x[threadIdx.x] >> 1;
}

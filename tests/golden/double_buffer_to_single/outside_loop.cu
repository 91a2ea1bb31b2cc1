// A toggle outside any loop is not a k-step's buffer switch: refused by the context.
__global__ void k(int* y) {
    int buf = 0;
    buf ^= 1;
    y[threadIdx.x] = buf;
}

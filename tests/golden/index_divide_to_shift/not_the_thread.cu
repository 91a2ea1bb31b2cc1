// A division of a size, not of the thread's index: left alone.
__global__ void groups(int* out, int n) {
    out[0] = n / (1 << 5);
}

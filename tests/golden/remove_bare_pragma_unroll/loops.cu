// Bare pragmas go, a pragma with a factor is the other rule's (remove_pragma_unroll).
__global__ void k(float* y) {
    float acc[4];
    #pragma unroll
    for (int i = 0; i < 4; ++i) {
        acc[i] = y[i];
    }
    #pragma unroll 2
    for (int i = 0; i < 4; ++i) {
        y[i] = acc[i] * 2.0f;
    }
}

// A loop of one iteration around a body that uses its index: the body stays, under a block
// that declares the index as the constant 0.
__global__ void scale_rows(float* x, int n) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
        {
            const int r = 0;
            x[t + r] *= 2.0f;
            x[t + r] += 1.0f;
        }
    }
}

// The local stride changes inside the loop: no match.
__global__ void odd_steps(float* x, int n) {
    int jump = blockDim.x * gridDim.x;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += jump) {
        x[idx] *= 2.0f;
        jump = jump + 1;
    }
}

#define BLOCK_SIZE 128
__global__ void __launch_bounds__(128) scale(float *y, const float *x, float a, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = a * x[i];
}
void launch(float *y, const float *x, float a, long n) {
    scale<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(y, x, a, n);
}

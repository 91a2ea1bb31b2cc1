// A GEMV's per-warp sum written out offset by offset.
__global__ void gemv_rows(const float* a, const float* x, float* y, int k) {
    const int row = blockIdx.x;
    float sum = 0.0f;
    for (int c = threadIdx.x; c < k; c += 32) sum += a[row * k + c] * x[c];
    sum += __shfl_xor_sync(0xffffffff, sum, 16);
    sum += __shfl_xor_sync(0xffffffff, sum, 8);
    sum += __shfl_xor_sync(0xffffffff, sum, 4);
    sum += __shfl_xor_sync(0xffffffff, sum, 2);
    sum += __shfl_xor_sync(0xffffffff, sum, 1);
    if (threadIdx.x == 0) y[row] = sum;
}

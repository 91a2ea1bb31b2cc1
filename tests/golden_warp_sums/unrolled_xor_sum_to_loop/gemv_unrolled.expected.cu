// A GEMV's per-warp sum written out offset by offset.
__global__ void gemv_rows(const float* a, const float* x, float* y, int k) {
    const int row = blockIdx.x;
    float sum = 0.0f;
    for (int c = threadIdx.x; c < k; c += 32) sum += a[row * k + c] * x[c];
    for (int klc_o = 16; klc_o > 0; klc_o >>= 1) {
        sum += __shfl_xor_sync(0xffffffff, sum, klc_o);
    }
    if (threadIdx.x == 0) y[row] = sum;
}

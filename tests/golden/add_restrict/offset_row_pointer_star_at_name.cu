// thread per row, interleaved declarations before the bound, row pointer into the input
__global__ void row_sum(float *out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    if (row >= rows) return;
    float *r = out + row * cols;
    for (int c = 0; c < cols; c++)
        acc += r[c];
    r[0] = acc;
}

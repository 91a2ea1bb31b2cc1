// The threads of a block share a shared-memory row: the block's shape is part of what the
// kernel computes. Refused.
__global__ void row_scale(float* out, const float* in, int rows, int cols) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ float s[16];
    if (threadIdx.x == 0) s[threadIdx.y] = in[r * cols];
    __syncthreads();
    if (r < rows && c < cols) out[r * cols + c] = in[r * cols + c] * s[threadIdx.y];
}
void launch(float* out, const float* in, int rows, int cols) {
    row_scale<<<dim3((cols + 15) / 16, (rows + 15) / 16), dim3(16, 16)>>>(out, in, rows, cols);
}

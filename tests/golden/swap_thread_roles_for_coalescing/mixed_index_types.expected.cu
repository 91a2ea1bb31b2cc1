// The row and column indices of different types: each keeps its own declared type while
// the thread roles swap (a 16 x 16 block from a constant of the launching function).
__global__ void scale_cols(float* out, const float* in, const float* w, long rows, int cols) {
    long r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) {
        out[r * cols + c] = in[r * cols + c] * w[c];
    }
}
void launch_scale(float* out, const float* in, const float* w, long rows, int cols) {
    const int side = 16;
    dim3 block(side, side);
    dim3 grid((cols + side - 1) / side, (rows + side - 1) / side);
    scale_cols<<<grid, block>>>(out, in, w, rows, cols);
}

// A loop of one iteration whose body may break: without the loop the break would leave the
// enclosing loop over rows, so the pass refuses.
__global__ void clamp_rows(float* x, int rows, int n) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int row = 0; row < rows; ++row) {
        for (int r = 0; r < 1; ++r) {
            if (x[row * n + t] < 0.0f) {
                break;
            }
            x[row * n + t] *= 2.0f;
        }
    }
}

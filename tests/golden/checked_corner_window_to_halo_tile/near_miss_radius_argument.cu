// The mask width and its radius are arguments: the tile's extent would not be a constant.
__global__ void conv_any(const float* m, float* r, const float* k, int N, int mask_width) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int start_r = row - mask_width / 2;
    int start_c = col - mask_width / 2;
    float t = 0.0f;
    for (int i = 0; i < mask_width; i++) {
        for (int j = 0; j < mask_width; j++) {
            if ((start_r + i) >= 0 && (start_r + i) < N) {
                if ((start_c + j) >= 0 && (start_c + j) < N) {
                    t += m[(start_r + i) * N + (start_c + j)] * k[i * mask_width + j];
                }
            }
        }
    }
    if (row < N && col < N) r[row * N + col] = t;
}

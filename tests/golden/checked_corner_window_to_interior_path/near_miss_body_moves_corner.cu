// The body moves the corner: the checks then read another corner than the condition.
#define D 3
__global__ void conv_moving(const float* m, float* r, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int start_r = row - 1;
    int start_c = col - 1;
    float t = 0.0f;
    for (int i = 0; i < D; i++) {
        for (int j = 0; j < D; j++) {
            if ((start_r + i) >= 0 && (start_r + i) < N) {
                if ((start_c + j) >= 0 && (start_c + j) < N) {
                    t += m[(start_r + i) * N + (start_c + j)];
                    start_c += 0 * j;
                }
            }
        }
    }
    if (row < N && col < N) r[row * N + col] = t;
}

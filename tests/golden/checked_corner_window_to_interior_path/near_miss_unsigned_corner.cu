// The corner held unsigned: below zero it wraps, and the interior condition would pass for
// the border's outputs.
#define MASK_DIM 3
__global__ void conv3(const float* m, float* r, const float* k, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int start_r = row - 1;
    unsigned int start_c = col - 1;
    float t = 0.0f;
    for (int i = 0; i < MASK_DIM; i++) {
        for (int j = 0; j < MASK_DIM; j++) {
            if ((start_r + i) >= 0 && (start_r + i) < N) {
                if ((start_c + j) >= 0 && (start_c + j) < N) {
                    t += m[(start_r + i) * N + (start_c + j)] * k[i * MASK_DIM + j];
                }
            }
        }
    }
    if (row < N && col < N) r[row * N + col] = t;
}

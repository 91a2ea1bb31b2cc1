// A weighted 5 x 5 filter over a height x width image, the window's corner as r_start /
// c_start, the filter width a constant local, 2-D block from the y index first.
__global__ void filter_5x5(const float* __restrict__ in, float* __restrict__ out,
                           const float* __restrict__ weights, int height, int width) {
    const int FW = 5;
    int y = blockDim.y * blockIdx.y + threadIdx.y;
    int x = blockDim.x * blockIdx.x + threadIdx.x;
    if (y >= height || x >= width) return;
    int r_start = y - FW / 2;
    int c_start = x - FW / 2;
    float acc = 0.0f;
    if (r_start >= 0 && r_start + FW <= height && c_start >= 0 && c_start + FW <= width) {
        for (int fy = 0; fy < FW; fy++) {
            for (int fx = 0; fx < FW; fx++) {
                acc += weights[fy * FW + fx] * in[(r_start + fy) * width + c_start + fx];
            }
        }
    } else {
        for (int fy = 0; fy < FW; fy++) {
            for (int fx = 0; fx < FW; fx++) {
                if ((r_start + fy) >= 0 && (r_start + fy) < height) {
                    if ((c_start + fx) >= 0 && (c_start + fx) < width) {
                        acc += weights[fy * FW + fx] * in[(r_start + fy) * width + c_start + fx];
                    }
                }
            }
        }
    }
    out[y * width + x] = acc;
}

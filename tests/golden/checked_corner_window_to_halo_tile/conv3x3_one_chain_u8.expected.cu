/* klc-spec
kernel: sharpen_u8
sizes: {H: 1024, W: 1024}
verify_sizes:
  - {H: 37, W: 101}
  - {H: 5, W: 3}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 255)"}
  - {name: out, shape: [H, W], role: out}
  - {name: w, shape: [9], role: in, init: "uniform(-1, 1)"}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
// A 3 x 3 filter of an unsigned char image, its window walked from the corner and checked in
// one && chain (rows and columns interleaved), its weights by pointer: the element's check in
// another order than the nested ifs of course material.
#define KSIZE 3

__global__ void sharpen_u8(const unsigned char* img, float* out, const float* w, int H, int W) {
    __shared__ unsigned char tile[16 + KSIZE - 1][16 + KSIZE - 1];
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int top = row - 1;
    int left = col - 1;
    float acc = 0.0f;
    for (int ty = threadIdx.y; ty < 16 + KSIZE - 1; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < 16 + KSIZE - 1; tx += blockDim.x) {
            int gr = blockIdx.y * blockDim.y + ty - 1;
            int gc = blockIdx.x * blockDim.x + tx - 1;
            tile[ty][tx] = (gr >= 0 && gr < H && gc >= 0 && gc < W) ? img[gr * W + gc] : 0;
        }
    }
    __syncthreads();
    for (int r = 0; r < KSIZE; r++) {
        for (int c = 0; c < KSIZE; c++) {
            if ((top + r) >= 0 && (top + r) < H) {
                if ((left + c) >= 0 && (left + c) < W) {
                    acc += tile[threadIdx.y + r][threadIdx.x + c] * w[r * KSIZE + c];
                }
            }
        }
    }
    if (row < H && col < W) out[row * W + col] = acc;
}

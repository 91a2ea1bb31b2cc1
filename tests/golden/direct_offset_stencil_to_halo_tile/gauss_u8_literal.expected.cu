/* klc-spec
kernel: gauss3_u8
sizes: {h: 2048, w: 2048}
args:
  - {name: src, shape: [h, w], role: in, init: "randint(0, 256)"}
  - {name: dst, shape: [h, w], role: out}
  - {name: h, value: h}
  - {name: w, value: w}
grid: ["ceil_div(w, 16)", "ceil_div(h, 16)"]
block: [16, 16]
*/
// A 3 x 3 Gaussian of an 8-bit image with the offsets' bounds written as literals (-1 is one
// number to the parser), the weight computed from the offsets, the weights of the pixels
// inside the image summed beside the pixels, the result rounded back to 8 bits.
__global__ void gauss3_u8(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                          int h, int w) {
    __shared__ unsigned char tile[16 + 2 * 1][16 + 2 * 1];
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    for (int ty = threadIdx.y; ty < 16 + 2 * 1; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < 16 + 2 * 1; tx += blockDim.x) {
            int gy = blockIdx.y * blockDim.y + ty - 1;
            int gx = blockIdx.x * blockDim.x + tx - 1;
            if (gy >= 0 && gy < h && gx >= 0 && gx < w) {
                tile[ty][tx] = src[gy * w + gx];
            }
        }
    }
    __syncthreads();
    if (px >= w || py >= h) return;
    int total = 0;
    int norm = 0;
    for (int oy = -1; oy <= 1; oy++) {
        for (int ox = -1; ox <= 1; ox++) {
            int sy = py + oy;
            int sx = px + ox;
            if (sy >= 0 && sy < h && sx >= 0 && sx < w) {
                int k = (2 - abs(oy)) * (2 - abs(ox));
                total += k * tile[sy - blockIdx.y * blockDim.y + 1][sx - blockIdx.x * blockDim.x + 1];
                norm += k;
            }
        }
    }
    dst[py * w + px] = (unsigned char)((total + norm / 2) / norm);
}

/* klc-spec
kernel: box_u8_fixed
sizes: {height: 4096, width: 8192}
verify_sizes:
  - {height: 37, width: 101}
  - {height: 5, width: 7}
  - {height: 1, width: 2}
args:
  - {name: in, shape: [height, width], role: in, init: "randint(0, 256)"}
  - {name: out, shape: [height, width], role: out}
  - {name: width, value: width}
  - {name: height, value: height}
grid: ["ceil_div(width, 32)", "ceil_div(height, 8)"]
block: [32, 8]
*/
// A 5 x 5 box filter of an 8-bit image with zero padding: the neighbours outside the image
// count as black, and the sum is always divided by 25.
#define R 2
__global__ void box_u8_fixed(const unsigned char* in, unsigned char* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int sum = 0;
    for (int dy = -R; dy <= R; dy++) {
        for (int dx = -R; dx <= R; dx++) {
            int yy = y + dy;
            int xx = x + dx;
            if (yy >= 0 && yy < height && xx >= 0 && xx < width) {
                sum += in[yy * width + xx];
            }
        }
    }
    out[y * width + x] = (unsigned char)(sum / ((2 * R + 1) * (2 * R + 1)));
}

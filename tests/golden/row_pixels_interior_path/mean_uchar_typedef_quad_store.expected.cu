/* klc-spec
kernel: meanFilter
sizes: {height: 4096, width: 4096}
verify_sizes:
  - {height: 37, width: 101}
  - {height: 3, width: 5}
args:
  - {name: input, shape: [height, width], type: "unsigned char*", role: in, init: "randint(0, 256)"}
  - {name: output, shape: [height, width], type: "unsigned char*", role: out}
  - {name: width, value: width}
  - {name: height, value: height}
grid: ["ceil_div(ceil_div(width, 32), 4)", "ceil_div(height, 8)"]
block: [32, 8]
bytes: 2 * height * width
flops: 9 * height * width
*/
// A 3 x 3 mean filter over an image of a `uchar` typedef, each thread computing four pixels of
// its row (++ in the loops' steps and the count), stored as one uchar4.
typedef unsigned char uchar;
#define RADIUS 1

__global__ void meanFilter(const uchar* input, uchar* output, int width, int height) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned char res[4];
    if (row >= RADIUS && row < height - RADIUS && col0 >= RADIUS && col0 + 4 <= width - RADIUS) {
        for (int k = 0; k < 4; k++) {
            int col = col0 + k;
            int total = 0;
            int count = 0;
            for (int dr = -RADIUS; dr <= RADIUS; dr++) {
                for (int dc = -RADIUS; dc <= RADIUS; dc++) {
                    int r = row + dr;
                    int c = col + dc;
                    total += input[r * width + c];
                    count++;
                }
            }
            res[k] = total / count;
        }
    } else {
        for (int k = 0; k < 4; k++) {
            int col = col0 + k;
            if (col < width && row < height) {
                int total = 0;
                int count = 0;
                for (int dr = -RADIUS; dr <= RADIUS; dr++) {
                    for (int dc = -RADIUS; dc <= RADIUS; dc++) {
                        int r = row + dr;
                        int c = col + dc;
                        if (r >= 0 && r < height && c >= 0 && c < width) {
                            total += input[r * width + c];
                            count++;
                        }
                    }
                }
                res[k] = total / count;
            }
        }
    }
    if (row < height && col0 + 4 <= width
        && (reinterpret_cast<unsigned long long>(&output[row * width + col0]) & 3) == 0) {
        *reinterpret_cast<uchar4*>(&output[row * width + col0]) = make_uchar4(res[0], res[1], res[2], res[3]);
    } else {
        for (int k = 0; k < 4; k++) {
            int col = col0 + k;
            if (col < width && row < height) {
                output[row * width + col] = res[k];
            }
        }
    }
}

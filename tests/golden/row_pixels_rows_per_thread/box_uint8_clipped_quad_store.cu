/* klc-spec
kernel: box_u8_clipped
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 3, W: 5}
args:
  - {name: in, shape: [H, W], type: "uint8_t*", role: in, init: "randint(0, 256)"}
  - {name: out, shape: [H, W], type: "uint8_t*", role: out}
  - {name: W, value: W}
  - {name: H, value: H}
grid: ["ceil_div(ceil_div(W, 32), 4)", "ceil_div(H, 8)"]
block: [32, 8]
bytes: 2 * H * W
flops: 9 * H * W
*/
#include <stdint.h>
// A 3 x 3 mean over a uint8_t image, its window clipped to the image with max and min (not
// the checked offsets of the row_pixels experts), after row_pixels_per_thread and
// row_pixels_uchar4_store: the rows per thread take it; the row sums need the interior path.
__global__ void box_u8_clipped(const uint8_t* in, uint8_t* out, int W, int H) {
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned char res[4];
    for (int k = 0; k < 4; k++) {
        int x = col0 + k;
        if (x < W && y < H) {
            int acc = 0;
            int cnt = 0;
            for (int v = max(y - 1, 0); v <= min(y + 1, H - 1); v++) {
                for (int u = max(x - 1, 0); u <= min(x + 1, W - 1); u++) {
                    acc += in[v * W + u];
                    cnt++;
                }
            }
            res[k] = (uint8_t)(acc / cnt);
        }
    }
    if (y < H && col0 + 4 <= W
        && (reinterpret_cast<unsigned long long>(&out[y * W + col0]) & 3) == 0) {
        *reinterpret_cast<uchar4*>(&out[y * W + col0]) = make_uchar4(res[0], res[1], res[2], res[3]);
    } else {
        for (int k = 0; k < 4; k++) {
            int x = col0 + k;
            if (x < W && y < H) {
                out[y * W + x] = res[k];
            }
        }
    }
}

/* klc-spec
kernel: gauss3
sizes: {H: 4096, W: 4096}
verify_sizes:
  - {H: 37, W: 101}
  - {H: 1, W: 2}
args:
  - {name: in, shape: [H, W], type: "unsigned char*", role: in, init: "randint(0, 256)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
bytes: 5 * H * W
flops: 18 * H * W
*/
// A 3 x 3 Gaussian of an 8-bit image, the weights of the clipped window renormalised at the
// border; the radius a #define, the row and column first.
#define K 1
__constant__ float kw[3] = {0.25f, 0.5f, 0.25f};
__global__ void gauss3(const unsigned char* in, float* out, int H, int W) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= H || col >= W) return;
    float s = 0.0f, wsum = 0.0f;
    for (int r = max(row - K, 0); r <= min(row + K, H - 1); r++) {
        for (int c = max(col - K, 0); c <= min(col + K, W - 1); c++) {
            float w = kw[r - row + K] * kw[c - col + K];
            s += w * in[r * W + c];
            wsum += w;
        }
    }
    out[row * W + col] = s / wsum;
}

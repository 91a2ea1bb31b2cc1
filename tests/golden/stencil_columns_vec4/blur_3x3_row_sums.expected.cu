/* klc-spec
kernel: box_blur_3x3
sizes: {H: 8192, W: 8192}
verify_sizes:
  - {H: 64, W: 256}
  - {H: 37, W: 101}
  - {H: 1, W: 2}
args:
  - {name: img, shape: [H, W], role: in, init: "uniform(0, 255)"}
  - {name: out, shape: [H, W], role: out}
  - {name: H, value: H}
  - {name: W, value: W}
grid: ["ceil_div(ceil_div(W, 16), 4)", "ceil_div(ceil_div(H, 16), 4)"]
block: [16, 16]
bytes: 8 * H * W
flops: 9 * H * W
*/
// The transfer set's blur_3x3 after the stencil_rows skills and the row sums: a 16 x 16
// block (x half a warp: each half-warp's float4 loads still read 256 contiguous bytes),
// literal radius and rows, and widths that are no multiple of 4 among the sizes it runs
// (101: those take the one-column path, by the run-time test).
// family: stencil
// style: 2D image, x and y naming, min/max clamping, nested loops over the window, count of valid neighbours (edges average fewer pixels)
// 3 x 3 box blur: out[y, x] = mean of img over the 3 x 3 window around (y, x) clipped to the
// image (edge pixels average 4 or 6 values, corners 4).
// bytes: img read once, out written. flops: 8 adds and a divide per pixel.
__global__ void box_blur_3x3(const float* __restrict__ img, float* __restrict__ out, int H, int W) {
    int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4;
    if (x0 >= W) return;
    if (y0 >= 1 && y0 + 4 + 1 <= H && x0 >= 1 && x0 + 4 < W && W % 4 == 0
        && ((reinterpret_cast<unsigned long long>(img)
             | reinterpret_cast<unsigned long long>(out)) & 15) == 0) {
        float4 hs[4 + 2 * 1];
        #pragma unroll
        for (int k = 0; k < 4 + 2 * 1; k++) {
            int yy = y0 - 1 + k;
            const float* p = &img[yy * W + x0];
            float4 mid = *reinterpret_cast<const float4*>(p);
            float left = p[-1];
            float right = p[4];
            hs[k] = make_float4(left + mid.x + mid.y, mid.x + mid.y + mid.z,
                                mid.y + mid.z + mid.w, mid.z + mid.w + right);
        }
        #pragma unroll
        for (int rr = 0; rr < 4; rr++) {
            int y = y0 + rr;
            float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            int count = 0;
            for (int dv = -1; dv <= 1; dv++) {
                float4 t = hs[rr + 1 + dv];
                sum.x += t.x;
                sum.y += t.y;
                sum.z += t.z;
                sum.w += t.w;
                for (int du = -1; du <= 1; du++) {
                    count++;
                }
            }
            *reinterpret_cast<float4*>(&out[y * W + x0]) =
                make_float4(sum.x / count, sum.y / count, sum.z / count, sum.w / count);
        }
    } else {
        for (int cc = 0; cc < 4; cc++) {
            int x = x0 + cc;
            if (x >= W) return;
            #pragma unroll
            for (int rr = 0; rr < 4; rr++) {
                int y = y0 + rr;
                if (y >= H) break;
                float sum = 0.0f;
                int count = 0;
                for (int yy = max(y - 1, 0); yy <= min(y + 1, H - 1); yy++) {
                    for (int xx = max(x - 1, 0); xx <= min(x + 1, W - 1); xx++) {
                        sum += img[yy * W + xx];
                        count++;
                    }
                }
                out[y * W + x] = sum / count;
            }
        }
    }
}

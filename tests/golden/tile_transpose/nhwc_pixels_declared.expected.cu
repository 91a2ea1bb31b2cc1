/* klc-spec
kernel: nhwc_to_nchw
sizes: {height: 64, width: 64, channels: 512}
verify_sizes:
  - {height: 16, width: 16, channels: 256}
  - {height: 7, width: 13, channels: 33}
args:
  - {name: dst, shape: [channels, height * width], role: out}
  - {name: src, shape: [height * width, channels], role: in, init: normal}
  - {name: height, value: height}
  - {name: width, value: width}
  - {name: channels, value: channels}
grid: ["ceil_div(channels, 32)", "ceil_div(height * width, 32)"]
block: [32, 32]
bytes: 8 * height * width * channels
flops: 0
*/
// A first channels-last to channels-first copy of one image (a transpose of its pixels by
// channels): the pixel count is a local declared between the thread indices and their check.
__global__ void nhwc_to_nchw(float* __restrict__ dst, const float* __restrict__ src,
                             int height, int width, int channels) {
    __shared__ float tile[32][32];
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int p = blockIdx.y * blockDim.y + threadIdx.y;
    int pixels = height * width;
    if (p < pixels && c < channels) {
        tile[threadIdx.y][threadIdx.x] = src[p * channels + c];
    }
    __syncthreads();
    {
        int c = blockIdx.x * blockDim.x + threadIdx.y;
        int p = blockIdx.y * blockDim.y + threadIdx.x;
        if (p < pixels && c < channels) {
            dst[c * pixels + p] = tile[threadIdx.x][threadIdx.y];
        }
    }
}

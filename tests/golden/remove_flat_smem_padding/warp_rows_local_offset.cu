/* klc-spec
kernel: planes_to_rows
sizes: {planes: 256, width: 4096}
args:
  - {name: out, shape: [width, planes], role: out}
  - {name: in, shape: [planes, width], role: in}
  - {name: planes, value: planes}
  - {name: width, value: width}
grid: ["ceil_div(width, 32)", "ceil_div(planes, 32)"]
block: [32, 8]
bytes: 8 * planes * width
*/
// A 32 x 32 tile moved through shared memory by a 32 x 8 block, four rows a thread: the
// flat tile is padded by one element a row, its row offset kept in a local on the way in
// and the pitch folded to 33 on the way out.
__global__ void planes_to_rows(float* out, const float* in, int planes, int width) {
    __shared__ float stage[32 * (32 + 1)];
    const int t = threadIdx.y * blockDim.x + threadIdx.x;
    const int warp = t / 32;
    const int lane = t % 32;
    const int p0 = blockIdx.y * 32;
    const int x0 = blockIdx.x * 32;
    if (x0 + lane < width) {
        const int row_off = lane * 33;
        for (int p = warp; p < 32; p += 8) {
            if (p0 + p < planes) {
                stage[row_off + p] = in[(p0 + p) * width + x0 + lane];
            }
        }
    }
    __syncthreads();
    if (p0 + lane < planes) {
        for (int x = warp; x < 32; x += 8) {
            if (x0 + x < width) {
                out[(x0 + x) * planes + p0 + lane] = stage[x * 33 + lane];
            }
        }
    }
}

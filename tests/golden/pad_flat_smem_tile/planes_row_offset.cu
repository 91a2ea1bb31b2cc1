/* klc-spec
kernel: rows_to_planes
sizes: {rows: 4096, planes: 256}
args:
  - {name: out, shape: [planes, rows], role: out}
  - {name: in, shape: [rows, planes], role: in}
  - {name: rows, value: rows}
  - {name: planes, value: planes}
grid: ["ceil_div(planes, 32)", "ceil_div(rows, 32)"]
block: [32, 8]
bytes: 8 * rows * planes
*/
// A 32 x 32 tile moved through a flat shared tile by a 32 x 8 block, four rows a thread:
// the row offset kept in a local on the way in, the pitch written out on the way out.
__global__ void rows_to_planes(float* out, const float* in, int rows, int planes) {
    __shared__ float stage[32 * 32];
    const int t = threadIdx.y * blockDim.x + threadIdx.x;
    const int warp = t / 32;
    const int lane = t % 32;
    const int r0 = blockIdx.y * 32;
    const int p0 = blockIdx.x * 32;
    if (p0 + lane < planes) {
        const int row_off = lane * 32;
        for (int r = warp; r < 32; r += 8) {
            if (r0 + r < rows) {
                stage[row_off + r] = in[(r0 + r) * planes + p0 + lane];
            }
        }
    }
    __syncthreads();
    if (r0 + lane < rows) {
        for (int p = warp; p < 32; p += 8) {
            if (p0 + p < planes) {
                out[(p0 + p) * rows + r0 + lane] = stage[p * 32 + lane];
            }
        }
    }
}

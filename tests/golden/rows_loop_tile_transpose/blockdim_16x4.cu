/* klc-spec
kernel: transpose_rows
sizes: {n: 8192}
verify_sizes:
  - {n: 256}
  - {n: 48}
args:
  - {name: out, shape: [n, n], role: out}
  - {name: in, shape: [n, n], role: in, init: normal}
grid: ["n / 16", "n / 16"]
block: [16, 4]
bytes: 8 * n * n
flops: 0
*/
// The rows-loop transpose spelled with the block's extents: the tile's edge is blockDim.x,
// the rows between a thread's elements blockDim.y; on a 16 x 4 block the tile the skill
// stages is 16 x 16 (?e from block.x) and each thread copies four rows of it.
__global__ void transpose_rows(float *out, const float *in)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.x + threadIdx.y;
    int width = gridDim.x * blockDim.x;

    for (int j = 0; j < blockDim.x; j += blockDim.y) {
        out[x * width + (y + j)] = in[(y + j) * width + x];
    }
}

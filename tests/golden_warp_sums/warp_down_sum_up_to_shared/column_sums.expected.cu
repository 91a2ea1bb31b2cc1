/* klc-spec
kernel: column_sums
sizes: {rows: 4096, cols: 4096}
args:
  - {name: x, shape: [rows, cols], role: in}
  - {name: y, shape: [cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["cols // 32"]
block: [32, 32]
*/
// Column sums: each row of 32 threads sums a column's partials down to lane 0.
#define TILE 32

__global__ void column_sums(const float* x, float* y, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    const int col = blockIdx.x * TILE + threadIdx.x;
    float s = 0.0f;
    for (int r = threadIdx.y; r < rows; r += TILE) s += x[r * cols + col];
    tile[threadIdx.x][threadIdx.y] = s;
    __syncthreads();
    float t = tile[threadIdx.y][threadIdx.x];
    {
        __shared__ decltype(0 + t) klc_lanes[1024];
        const int klc_t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        __syncwarp(0xffffffffu);
        klc_lanes[klc_t] = t;
        __syncwarp(0xffffffffu);
        t = 0;
        for (int i = 0; i < TILE; i++) {
            t += klc_lanes[(klc_t & ~31) + i];
        }
        __syncwarp(0xffffffffu);
    }
    if (threadIdx.x == 0) y[blockIdx.x * TILE + threadIdx.y] = t;
}

/* klc-spec
kernel: tile_visits
sizes: {rows: 128, len: 65536}
args:
  - {name: w, shape: [rows, len], role: inout}
  - {name: visits, shape: [1], role: out}
  - {name: rows, value: rows}
  - {name: len, value: len}
  - {name: chunk, value: 1024}
grid: ["ceil_div(rows, 128)", "ceil_div(len, 1024)"]
block: [128]
bytes: 8 * rows * len
*/
// Each block counts itself after its chunk: the count is the number of tiles.
__global__ void tile_visits(float* w, int* visits, int rows, int len, int chunk) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        const int first = blockIdx.y * chunk;
        const int last = min(first + chunk, len);
        for (int j = first; j < last; j++) {
            w[row * len + j] *= 0.5f;
        }
    }
    atomicAdd(visits, 1);
}

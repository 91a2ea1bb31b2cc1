/* klc-spec
kernel: row_max_t
template: {TILE: 32}
sizes: {rows: 4096}
args:
  - {name: x, shape: [rows, 32], role: in}
  - {name: y, shape: [rows], role: out}
grid: [rows]
block: [32]
*/
// A warp maximum through a temporary, offsets going up, the bound a template constant.
template <int TILE>
__global__ void row_max_t(const float* x, float* y) {
    float m = x[blockIdx.x * TILE + threadIdx.x];
    for (int i = 1; i < TILE; i *= 2) {
        auto t = __shfl_xor_sync(0xffffffff, m, i);
        m = (t > m ? t : m);
    }
    if (threadIdx.x == 0) y[blockIdx.x] = m;
}

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
    {
        __shared__ decltype(0 + m) klc_lanes[1024];
        const int klc_t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        __syncwarp(0xffffffff);
        klc_lanes[klc_t] = m;
        __syncwarp(0xffffffff);
        for (int i = 0; i < TILE; i++) {
            m = max(m, klc_lanes[(klc_t & ~31) + i]);
        }
        __syncwarp(0xffffffff);
    }
    if (threadIdx.x == 0) y[blockIdx.x] = m;
}

/* klc-spec
kernel: tile_rows
sizes: {n: 8388608}
verify_sizes: [{n: 1048576}, {n: 32768}]
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: y, shape: ["n / 32"], role: out}
  - {name: n, value: n}
grid: ["n / 1024"]
block: [32]
bytes: 4 * n + n / 8
flops: n
timeout_s: 60
*/
// Each block sums a tile of 8 rows x 128 floats column-group-wise: thread t adds up the
// four floats t*4 .. t*4+3 of every row. The rows are padded to 129 floats, so a row
// starts 516 bytes after the previous one: &t[r][tid * 4] is 16-byte aligned only for
// even r, and a float4 read there faults (element_aligned refuses it).
extern "C" __global__ void tile_rows(const float* __restrict__ x, float* __restrict__ y,
                                     int n) {
    __shared__ __align__(16) float t[8][129];
    const int tid = threadIdx.x;
    const float* tile = x + (size_t)blockIdx.x * 1024;
    for (int r = 0; r < 8; ++r) {
        for (int c = 0; c < 4; ++c) {
            t[r][tid * 4 + c] = tile[r * 128 + tid * 4 + c];
        }
    }
    __syncthreads();
    float acc = 0.0f;
    for (int r = 0; r < 8; ++r) {
        float4 v = make_float4(t[r][tid * 4], t[r][(tid * 4) + 1], t[r][(tid * 4) + 2], t[r][(tid * 4) + 3]);
        acc += (v.x + v.y) + (v.z + v.w);
    }
    y[blockIdx.x * 32 + tid] = acc;
}

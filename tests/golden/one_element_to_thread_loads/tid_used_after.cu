/* klc-spec
kernel: sum_and_flag
sizes: {n: 1048576}
args:
  - {name: in, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 256)"], role: out}
  - {name: seen, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// Refused: after the block's sum every thread marks its element with its index: on a block
// of 256 / k threads the marks of the other elements would never be written.
__global__ void sum_and_flag(const float* in, float* out, float* seen, int n) {
    __shared__ float red[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * 256 + tid;
    float sum = (i < n) ? in[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_down_sync(0xffffffff, sum, o);
    }
    if (tid % 32 == 0) {
        red[tid / 32] = sum;
    }
    __syncthreads();
    if (tid < 32) {
        sum = tid < 256 / 32 ? red[tid] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) {
            sum += __shfl_down_sync(0xffffffff, sum, o);
        }
    }
    if (tid == 0) {
        out[blockIdx.x] = sum;
    }
    if (i < n) {
        seen[blockIdx.x * 256 + tid] = 1.0f;
    }
}

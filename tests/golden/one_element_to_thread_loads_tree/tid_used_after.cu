/* klc-spec
kernel: sum_then_scale
sizes: {n: 1048576}
args:
  - {name: in, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 256)"], role: out}
  - {name: scaled, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// Refused: after the partial, every thread writes its own element scaled: a block of 256 / k
// threads would leave the other elements unwritten.
__global__ void sum_then_scale(const float* in, float* out, float* scaled, int n) {
    __shared__ float sdata[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * 256 + tid;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (int s = 256 / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
    if (i < n) {
        scaled[i] = in[i] * 0.5f;
    }
}

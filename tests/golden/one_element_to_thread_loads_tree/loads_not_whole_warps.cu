/* klc-spec
kernel: tile_sums
sizes: {n: 1048576}
args:
  - {name: in, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 128)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 128)"]
block: [128]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// Refused at ?k = 8: 128 / 8 = 16 threads, not whole warps.
__global__ void tile_sums(const float* in, float* out, int n) {
    __shared__ float sdata[128];
    int tid = threadIdx.x;
    int i = blockIdx.x * 128 + tid;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (int s = 128 / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

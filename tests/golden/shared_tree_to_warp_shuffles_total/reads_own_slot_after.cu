/* klc-spec
kernel: share_of_total
sizes: {n: 65536}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: y, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Near miss: after the tree each thread reads its own slot too (a partial sum the shuffle
// form never writes there).
__global__ void share_of_total(const float* x, float* y, int n) {
    __shared__ float sdata[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[threadIdx.x] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sdata[threadIdx.x] += sdata[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (i < n) {
        y[i] = sdata[threadIdx.x] / sdata[0];
    }
}

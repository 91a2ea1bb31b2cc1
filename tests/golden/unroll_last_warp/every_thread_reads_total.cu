/* klc-spec
kernel: normalize_block
sizes: {n: 16777216}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: y, shape: [n], role: out, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: 2 * n
tolerance: {rtol: 0.001, atol: 0.001}
*/
// Each block's elements divided by the block's sum: every thread reads the total from
// red[0] after the tree, so the tree's last warp cannot leave it in thread 0 alone.
__global__ void normalize_block(const float* __restrict__ x, float* __restrict__ y, int n)
{
    __shared__ float red[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? x[i] : 0.0f;
    float sum = v;
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = 256 / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            red[threadIdx.x] += red[threadIdx.x + s];
        }
        __syncthreads();
    }
    sum = red[0];
    if (i < n) {
        y[i] = v / sum;
    }
}

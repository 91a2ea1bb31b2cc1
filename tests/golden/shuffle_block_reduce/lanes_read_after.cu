/* klc-spec
kernel: block_partials
sizes: {n: 16777216}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 256) * 32"], role: out, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n
flops: n
tolerance: {rtol: 0.001, atol: 0.001}
*/
#define BLOCK 256
// A block's tree reduction whose warp 0 stores every lane's value after it (the lanes'
// partial sums of the tree, which a second pass reads): only thread 0's acc is the block's
// total, and a warp-shuffle rewrite leaves the other lanes other partial sums.
__global__ void block_partials(const float* x, float* out, int n)
{
    __shared__ float red[BLOCK];
    __shared__ float warp_sums[BLOCK / 32];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = i < n ? x[i] : 0.0f;
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 32; stride >>= 1) {
        if (threadIdx.x < stride) {
            red[threadIdx.x] += red[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        acc = red[threadIdx.x] + red[threadIdx.x + 32];
        __syncwarp();
        red[threadIdx.x] = acc;
        __syncwarp();
        acc += red[threadIdx.x + 16];
        __syncwarp();
        red[threadIdx.x] = acc;
        __syncwarp();
        acc += red[threadIdx.x + 8];
        __syncwarp();
        red[threadIdx.x] = acc;
        __syncwarp();
        acc += red[threadIdx.x + 4];
        __syncwarp();
        red[threadIdx.x] = acc;
        __syncwarp();
        acc += red[threadIdx.x + 2];
        __syncwarp();
        red[threadIdx.x] = acc;
        __syncwarp();
        acc += red[threadIdx.x + 1];
    }
    if (threadIdx.x < 32) {
        out[blockIdx.x * 32 + threadIdx.x] = acc;
    }
}

/* klc-spec
kernel: block_sumsq
template: {BLOCK: 1024}
sizes: {n: 16777216}
args:
  - {name: x, shape: [n], role: in, init: "uniform(-1, 1)"}
  - {name: out, shape: [1], role: inout, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK)"]
block: [BLOCK]
bytes: 4 * n
flops: 2 * n
tolerance: {rtol: 0.001, atol: 0.001}
*/
// Sum of squares, one element per thread, 1024-thread blocks. The warp_sums array was
// sized for the 256-thread version (8 warps) and is left over: a warp-shuffle rewrite that
// parks 32 warp sums in it writes past its end.
template <int BLOCK>
__global__ void block_sumsq(const float *x, float *out, int n)
{
    __shared__ float red[BLOCK];
    __shared__ float warp_sums[8];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    float acc = 0.0f;
    if (i < n) {
        acc = x[i] * x[i];
    }
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
    if (threadIdx.x == 0) {
        atomicAdd(out, acc);
    }
}

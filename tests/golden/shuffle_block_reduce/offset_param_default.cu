/* klc-spec
kernel: reduce_sum
template: {BLOCK: 256}
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: [1], role: inout, init: zeros}
  - {name: n, value: n}
  - {name: offset, value: 0}
grid: ["(ceil_div(n, BLOCK * 16)) * 16"]
block: [BLOCK]
bytes: 4 * n
flops: n
tolerance: {rtol: 0.001, atol: 0.001}
*/
// Sum of n floats into out[0] (which the caller zeroes). The expert of the reduce_sum
// lineage; each optimization is one separable code shape (README.md names the pass that
// removes it):
//   - __launch_bounds__(BLOCK), a templated block size (every loop bound is a constant);
//   - const __restrict__ input;
//   - 128-bit loads: a float4 grid-stride loop over the first 4 * (n / 4) elements and a
//     scalar loop over the tail of at most 3;
//   - many elements per thread: grid-stride loops (the grid is n / (16 * BLOCK) blocks);
//   - the block's partial sums combined with warp shuffles: each warp reduces in registers,
//     warp leaders park their sums in shared memory, the first warp reduces those;
//   - one atomicAdd per block.
template <int BLOCK>
__global__ void 
reduce_sum(const float* __restrict__ x, float* __restrict__ out, int n, int offset) {
    __shared__ float red[BLOCK];
    __shared__ float warp_sums[BLOCK / 32];
    float acc = 0.0f;
    {
        int i = blockIdx.x * BLOCK + threadIdx.x;
        if (i < n) {
            acc += x[offset + i];
        }
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

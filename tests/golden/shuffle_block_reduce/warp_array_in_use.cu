/* klc-spec
kernel: sum_and_max
sizes: {n: 16777216}
verify_sizes:
  - {n: 1000003}
  - {n: 37}
args:
  - {name: in, shape: [n], role: in, init: "uniform(-1, 1)"}
  - {name: partial, shape: ["ceil_div(n, 512)"], role: out, init: zeros}
  - {name: peak, shape: ["ceil_div(n, 512)"], role: out, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, 512)"]
block: [512]
bytes: 4 * n
flops: n
tolerance: {rtol: 0.001, atol: 0.001}
*/
#define THREADS 512
// A block's sum and maximum: the warp maxima are parked in warp_sums before the sum and
// read after it, so a warp-shuffle sum may not reuse that array.
__global__ void sum_and_max(const float *in, float *partial, float *peak, long n)
{
    __shared__ float red[THREADS];
    __shared__ float warp_sums[32];
    const unsigned int tid = threadIdx.x;
    long i = (long)blockIdx.x * THREADS + tid;
    float acc = 0.0f;
    if (i < n)
        acc = in[i];
    float m = acc;
    for (int o = 16; o > 0; o >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x % 32 == 0)
        warp_sums[threadIdx.x / 32] = m;
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 32; stride >>= 1) {
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
    if (tid == 0) {
        partial[blockIdx.x] = acc;
        float best = warp_sums[0];
        for (int w = 1; w < THREADS / 32; w++)
            best = fmaxf(best, warp_sums[w]);
        peak[blockIdx.x] = best;
    }
}

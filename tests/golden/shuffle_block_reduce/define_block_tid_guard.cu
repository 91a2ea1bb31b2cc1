/* klc-spec
kernel: partial_sums
sizes: {n: 16777216}
verify_sizes:
  - {n: 1000003}
  - {n: 37}
args:
  - {name: in, shape: [n], role: in, init: "uniform(-1, 1)"}
  - {name: partial, shape: ["ceil_div(n, 512)"], role: out, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, 512)"]
block: [512]
bytes: 4 * n
flops: n
tolerance: {rtol: 0.001, atol: 0.001}
*/
#define THREADS 512
// First pass of a two-pass sum: one partial per block, written by thread 0 (read through a
// copy of its index). The 32-slot warp array is the spare one every block-sum helper of the
// file declares.
__global__ void partial_sums(const float *in, float *partial, long n)
{
    __shared__ float red[THREADS];
    __shared__ float warp_sums[32];
    const unsigned int tid = threadIdx.x;
    long i = (long)blockIdx.x * THREADS + tid;
    float acc = 0.0f;
    if (i < n)
        acc = in[i];
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
    if (tid == 0)
        partial[blockIdx.x] = acc;
}

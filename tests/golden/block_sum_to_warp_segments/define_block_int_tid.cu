/* klc-spec
kernel: block_partials
sizes: {n: 1048576}
verify_sizes:
  - {n: 4099}
args:
  - {name: in, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 512)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 512)"]
block: [512]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// A #define'd partition of 512 elements, signed thread and element indices, the shuffles'
// mask as 0xffffffffu and a host launch that spells the grid as a ceiling division by the
// macro and the block as the macro, with a stream.
#define BLOCK 512

__global__ void block_partials(const float* in, float* out, int n) {
    __shared__ float warp_sums[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + threadIdx.x;
    float sum = i < n ? in[i] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if (tid % 32 == 0) {
        warp_sums[tid / 32] = sum;
    }
    __syncthreads();
    if (tid < 32) {
        sum = tid < BLOCK / 32 ? warp_sums[tid] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) {
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        }
    }
    if (tid == 0) {
        out[blockIdx.x] = sum;
    }
}

void launch_partials(const float* in, float* out, int n, cudaStream_t stream) {
    block_partials<<<(n + BLOCK - 1) / BLOCK, BLOCK, 0, stream>>>(in, out, n);
}

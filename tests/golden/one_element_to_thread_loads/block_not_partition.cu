/* klc-spec
kernel: block_partials
sizes: {n: 1048576}
args:
  - {name: in, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 128)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 128)"]
block: [128]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// Refused: the partition's 256 is not the block (128 threads): the warp count 256 / 32 reads
// warp sums no thread parked, and the partials are not one per 256 elements as the code says.
#define SPAN 256

__global__ void block_partials(const float* in, float* out, int n) {
    __shared__ float red[SPAN];
    int tid = threadIdx.x;
    int i = blockIdx.x * SPAN + threadIdx.x;
    float sum = (i < n) ? in[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_down_sync(0xffffffff, sum, o);
    }
    if (tid % 32 == 0) {
        red[tid / 32] = sum;
    }
    __syncthreads();
    if (tid < 32) {
        sum = tid < SPAN / 32 ? red[tid] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) {
            sum += __shfl_down_sync(0xffffffff, sum, o);
        }
    }
    if (tid == 0) {
        out[blockIdx.x] = sum;
    }
}

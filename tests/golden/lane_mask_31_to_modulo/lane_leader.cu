/* klc-spec
kernel: reduce_masked_lane
template: {BLOCK_SIZE: 256}
sizes: {n: 1048576}
args:
  - {name: in, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: ["ceil_div(n, BLOCK_SIZE)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, BLOCK_SIZE)"]
block: [BLOCK_SIZE]
*/
// The warp leaders of a shuffle reduction found with a mask of the low five bits.
template <unsigned int BLOCK_SIZE>
__global__ void reduce_masked_lane(const float* in, float* out, unsigned int n) {
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK_SIZE + tid;
    float sum = (i < n) ? in[i] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_down_sync(0xffffffff, sum, offset);
    }
    if ((tid & 31) == 0) {
        sdata[tid / 32] = sum;
    }
    __syncthreads();
    if (tid < 32) {
        sum = tid < BLOCK_SIZE / 32 ? sdata[tid] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) {
            sum += __shfl_down_sync(0xffffffff, sum, offset);
        }
    }
    if (tid == 0) {
        out[blockIdx.x] = sum;
    }
}

/* klc-spec
kernel: block_partials
sizes: {n: 1048576}
args:
  - {name: in, shape: [n], role: in, init: "normal(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// Refused: the partition is blockDim.x: a block ?k times smaller would also make each
// block's partition ?k times smaller (and the partials, one per 256 elements, would not be).
__global__ void block_partials(const float* in, float* out, int n) {
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

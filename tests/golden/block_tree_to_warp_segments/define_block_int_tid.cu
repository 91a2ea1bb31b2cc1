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
// A #define'd partition of 512 elements in the shared tree of sequential addressing, signed
// thread and element indices and tree stride, and a host launch that spells the grid as a
// ceiling division by the macro and the block as the macro, with a stream.
#define BLOCK 512

__global__ void block_partials(const float* in, float* out, int n) {
    __shared__ float partials[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + threadIdx.x;
    partials[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) {
            partials[tid] += partials[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = partials[0];
    }
}

void launch_partials(const float* in, float* out, int n, cudaStream_t stream) {
    block_partials<<<(n + BLOCK - 1) / BLOCK, BLOCK, 0, stream>>>(in, out, n);
}

/* klc-spec
kernel: reduce_shfl
sizes: {n: 1048576}
verify_sizes:
  - {n: 1000003}
args:
  - {name: in, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: out, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// The shuffle reduction spelled with a FULL_MASK macro, the built-in warpSize and the
// block's own blockDim.x (256 threads, from the spec).
#define FULL_MASK 0xffffffff

__global__ void reduce_shfl(const float* in, float* out, int n) {
    __shared__ float sdata[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[threadIdx.x] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (int offset = blockDim.x / 2; offset > 0; offset >>= 1) {
        if (threadIdx.x < offset) {
            sdata[threadIdx.x] += sdata[threadIdx.x + offset];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

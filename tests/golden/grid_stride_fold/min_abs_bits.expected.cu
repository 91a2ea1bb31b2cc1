/* klc-spec
kernel: min_magnitude
sizes: {n: 16777216}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: "normal(0, 3)"}
  - {name: out, shape: [1], role: inout, init: "uniform(4, 5)"}
  - {name: n, value: n}
grid: ["ceil_div(ceil_div(n, 128), 16)"]
block: [128]
bytes: 4 * n
flops: n
*/
// The smallest magnitude of x (how close the data comes to zero): a shared fminf tree from
// INFINITY, an unsigned atomicMin on the float's bits (every value is >= 0: the bits order as
// the floats do).
__global__ void min_magnitude(const float* x, float* out, int n) {
    __shared__ float s[128];
    unsigned int tid = threadIdx.x;
    float v = INFINITY;
    for (unsigned int idx = blockIdx.x * blockDim.x + tid; idx < n; idx += blockDim.x * gridDim.x) {
        v = fminf(v, fabsf(x[idx]));
    }
    s[tid] = v;
    __syncthreads();
    for (unsigned int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] = fminf(s[tid], s[tid + k]);
        __syncthreads();
    }
    if (tid == 0) atomicMin((unsigned int*)out, __float_as_uint(s[0]));
}

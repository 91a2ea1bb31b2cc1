/* klc-spec
kernel: weighted
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: out, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n
flops: n
*/
// Each level halves the upper slot: the weight an element gets depends on the pairing, so the
// two addressings differ. Refused.
__global__ void weighted(const float* x, float* out, int n) {
    __shared__ float s[256];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * 256 + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int k = 1; k < 256; k *= 2) {
        if (t % (2 * k) == 0) {
            s[t] += 0.5f * s[t + k];
        }
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

/* klc-spec
kernel: pair_sums
template: {TREE: 128}
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
// The tree spans 128 slots of a 256-thread block: the interleaved tree's threads 128 .. 255
// also work (reading past the tree), the sequential one's would not. Refused.
template <int TREE>
__global__ void pair_sums(const float* x, float* out, int n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    int i = blockIdx.x * 256 + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 1; k < TREE; k *= 2) {
        if (t % (2 * k) == 0) {
            s[t] += s[t + k];
        }
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0] + s[128];
}

/* klc-spec
kernel: sum_and_count
sizes: {n: 16777216}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: out, shape: [2], role: inout, init: zeros}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: n
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// The sum goes out by an atomic add, but so does a count of the blocks that ran.
__global__ void sum_and_count(const float *x, float *out, int n) {
    __shared__ float s[256];
    float acc = 0.0f;
    {
        int i = blockIdx.x * 256 + threadIdx.x;
        if (i < n) { acc += x[i]; }
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(&out[0], s[0]);
        atomicAdd(&out[1], 1.0f);
    }
}

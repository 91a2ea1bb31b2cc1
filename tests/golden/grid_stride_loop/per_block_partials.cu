/* klc-spec
kernel: block_partials
sizes: {n: 16777216}
verify_sizes:
  - {n: 4099}
  - {n: 37}
args:
  - {name: x, shape: [n], role: in, init: normal}
  - {name: partial, shape: ["ceil_div(n, 256)"], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
flops: n
tolerance: {rtol: 0.0001, atol: 0.0001}
*/
// One partial sum per block: with fewer blocks there would be fewer partials.
#define THREADS 256
__global__ void block_partials(const float* x, float* partial, int n) {
    __shared__ float s[THREADS];
    float acc = 0.0f;
    {
        int i = blockIdx.x * THREADS + threadIdx.x;
        if (i < n) { acc += x[i]; }
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int k = THREADS / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

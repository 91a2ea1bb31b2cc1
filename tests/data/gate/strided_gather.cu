/* klc-spec
kernel: strided_gather
sizes: {n: 16777216, m: 65521}
args:
  - {name: table, shape: [m], role: in, init: normal}
  - {name: out, shape: [n], role: out}
  - {name: n, value: n}
  - {name: m, value: m}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 8 * n
*/
// The reference: out[i] = table[(i * 4093) mod m], the product taken in 64 bits.
extern "C" __global__ void strided_gather(const float* __restrict__ table,
                                          float* __restrict__ out, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        long long j = (long long)i * 4093 % m;
        out[i] = table[j];
    }
}

/* klc-spec
kernel: swish<float>
sizes: {n: 16777216}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 5}
args:
  - {name: out, shape: [n], role: out}
  - {name: in, shape: [n], role: in, init: normal}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Swish over a template element type: T *x spacing, a 64-bit index with a cast, an early
// return, the index terms in another order.
template <typename T>
__global__ void swish(T *out, const T *in, long n) {
    long i = threadIdx.x + (long)blockIdx.x * blockDim.x;
    if (i >= n) return;
    T v = in[i];
    out[i] = v / ((T)1 + exp(-v));
}

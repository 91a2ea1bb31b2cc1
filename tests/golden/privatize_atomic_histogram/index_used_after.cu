/* klc-spec
kernel: hist_flag
sizes: {n: 1048576}
args:
  - {name: keys, shape: [n], role: in, init: "randint(0, 64)"}
  - {name: hist, shape: [64], role: inout, init: "randint(0, 10)"}
  - {name: seen, shape: [1], role: inout, init: "zeros"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Near miss: the element index is read after the histogram code; the private histogram
// would scope it inside its block, and the read after would no longer compile.
__global__ void hist_flag(const int* keys, unsigned int* hist, unsigned int* seen, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&hist[keys[i]], 1u);
    }
    if (i == 0) seen[0] = 1u;
}

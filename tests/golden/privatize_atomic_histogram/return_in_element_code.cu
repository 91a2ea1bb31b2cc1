/* klc-spec
kernel: valid_hist
sizes: {n: 1048576}
args:
  - {name: keys, shape: [n], role: in, init: "randint(-4, 64)"}
  - {name: hist, shape: [64], role: inout, init: "randint(0, 100)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Near miss: the element code leaves early for a negative key; under the private histogram
// those threads would never reach the barriers around it.
__global__ void valid_hist(const int* keys, unsigned int* hist, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int k = keys[i];
    if (k < 0) return;
    atomicAdd(&hist[k], 1u);
}

/* klc-spec
kernel: capped_hist
sizes: {n: 1048576}
args:
  - {name: keys, shape: [n], role: in, init: "randint(0, 128)"}
  - {name: hist, shape: [128], role: inout, init: "randint(0, 10)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Near miss: the element code reads the global counters before adding (a cap): with a
// private copy it would read counts that do not hold its own block's adds yet.
__global__ void capped_hist(const int* keys, unsigned int* hist, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k = keys[i];
        unsigned int seen = hist[k];
        if (seen > 1000u) k = 0;
        atomicAdd(&hist[k], 1u);
    }
}

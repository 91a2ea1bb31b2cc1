/* klc-spec
kernel: weighted_hist
sizes: {n: 1048576}
args:
  - {name: keys, shape: [n], role: in, init: "randint(0, 128)"}
  - {name: w, shape: [n], role: in, init: "uniform(0, 1)"}
  - {name: hist, shape: [128], role: inout, init: "uniform(0, 1)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
// Near miss: float bins. A private float copy would add in another order (float addition
// is not associative), so no integer type of the skill fits.
__global__ void weighted_hist(const int* keys, const float* w, float* hist, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&hist[keys[i]], w[i]);
    }
}

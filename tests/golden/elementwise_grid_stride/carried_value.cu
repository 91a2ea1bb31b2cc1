/* klc-spec
kernel: carried_value
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
// Near miss: a value declared before the check is read before the body sets it (the
// previous element's input, in one thread): a grid-stride loop would carry it from one
// element to the next (refused).
__global__ void carried_value(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float prev = 0.0f;
    if (i < n) {
        out[i] = prev + in[i];
        prev = in[i];
    }
}

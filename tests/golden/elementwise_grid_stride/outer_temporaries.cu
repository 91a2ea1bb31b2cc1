/* klc-spec
kernel: shared_temporaries
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
// Near miss: temporaries declared before the check and assigned in the body. Each is
// written before it is read here, but the guard cannot tell a carried value from a
// temporary, so it refuses (assigns_only_locals).
__global__ void shared_temporaries(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x, t;
    if (i < n) {
        x = in[i];
        t = tanhf(x);
        out[i] = x * t;
    }
}

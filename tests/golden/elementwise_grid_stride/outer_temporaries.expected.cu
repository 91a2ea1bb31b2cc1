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
grid: ["ceil_div(ceil_div(n, 256), 16)"]
block: [256]
*/
// Temporaries declared before the check and assigned in the body (gelu_backward style):
// each is set by a statement of the body before it is read, so no value carries from one
// element to the next (written_before_read).
__global__ void shared_temporaries(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x, t;
    for (; i < n; i += (int)blockDim.x * gridDim.x) {
        x = in[i];
        t = tanhf(x);
        out[i] = x * t;
    }
}

/* klc-spec
kernel: gelu_backward
sizes: {N: 33554432}
args:
  - {name: dinp, shape: [N], role: out}
  - {name: inp, shape: [N], role: in, init: "normal(0, 2)"}
  - {name: dout, shape: [N], role: in, init: normal}
  - {name: N, value: N}
grid: ["ceil_div(N, 256)"]
block: [256]
bytes: 12 * N
flops: 16 * N
*/
// family: elementwise
// style: T *x spacing, declarations interleaved before the bounds check, M_PI, const int size
// Gradient of the tanh-form GELU: dinp = dout * d/dx [0.5 x (1 + tanh(u))],
// u = sqrt(2 / pi) (x + 0.044715 x^3).
// bytes: inp and dout read, dinp written (12N). flops: about 16 per element; tanhf and coshf
// are not counted.
__global__ void gelu_backward(float *dinp, const float *inp, const float *dout, const int N) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const float s = sqrtf(2.0f / M_PI);
    float x, t, sech2;
    if (idx < N) {
        x = inp[idx];
        float u = s * (x + 0.044715f * x * x * x);
        t = tanhf(u);
        float ch = coshf(u);
        sech2 = 1.0f / (ch * ch);
        float du = s * (1.0f + 3.0f * 0.044715f * x * x);
        float grad = 0.5f * (1.0f + t) + 0.5f * x * sech2 * du;
        dinp[idx] = grad * dout[idx];
    }
}

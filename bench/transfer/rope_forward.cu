/* klc-spec
kernel: rope_forward
sizes: {B: 8, T: 1024, NH: 32, HS: 128}
verify_sizes:
  - {B: 2, T: 64, NH: 4, HS: 64}
  - {B: 1, T: 37, NH: 3, HS: 18}
  - {B: 1, T: 2, NH: 1, HS: 2}
args:
  - {name: out, shape: [B, T, NH, HS], role: out}
  - {name: inp, shape: [B, T, NH, HS], role: in, init: normal}
  - {name: B, value: B}
  - {name: T, value: T}
  - {name: NH, value: NH}
  - {name: HS, value: HS}
grid: ["ceil_div(B * T * NH * (HS // 2), 256)"]
block: [256]
bytes: 8 * B * T * NH * HS
flops: 3 * B * T * NH * HS
*/
// family: elementwise
// style: index unpacked with / and %, early return, row pointers, powf / sinf / cosf
// Rotary position embedding on (B, T, NH, HS) with interleaved pairs: for pair j of head
// dimension, angle = t * 10000^(-2j / HS), (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos).
// One pair per thread. HS must be even.
// bytes: inp read, out written (8 elements' bytes each). flops: 6 per pair (3 per element);
// powf, sinf, cosf not counted.
__global__ void rope_forward(float* out, const float* inp, int B, int T, int NH, int HS) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int half = HS / 2;
    if (idx >= B * T * NH * half) return;
    int j = idx % half;
    int h = (idx / half) % NH;
    int t = (idx / (half * NH)) % T;
    int b = idx / (half * NH * T);
    float freq = powf(10000.0f, -2.0f * j / HS);
    float angle = t * freq;
    float c = cosf(angle);
    float s = sinf(angle);
    const float* x = inp + ((b * T + t) * NH + h) * HS;
    float* y = out + ((b * T + t) * NH + h) * HS;
    float x0 = x[2 * j];
    float x1 = x[2 * j + 1];
    y[2 * j] = x0 * c - x1 * s;
    y[2 * j + 1] = x0 * s + x1 * c;
}

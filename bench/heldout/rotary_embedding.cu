/* klc-spec
kernel: rotary_embedding
sizes: {seq: 4096, heads: 32, head_dim: 128}
verify_sizes:
  - {seq: 64, heads: 8, head_dim: 128}
  - {seq: 37, heads: 3, head_dim: 18}
  - {seq: 5, heads: 1, head_dim: 2}
args:
  - {name: x, shape: [seq, heads, head_dim], role: in, init: normal}
  - {name: y, shape: [seq, heads, head_dim], role: out}
  - {name: seq, value: seq}
  - {name: heads, value: heads}
  - {name: head_dim, value: head_dim}
  - {name: base, value: 10000.0}
grid: ["ceil_div(seq * heads * head_dim // 2, 256)"]
block: [256]
bytes: 8 * seq * heads * head_dim
flops: 7 * seq * heads * head_dim // 2
tolerance: {rtol: 0.0001, atol: 0.00001}
*/
// Rotary position embedding (interleaved pairs) of x, laid out [seq, heads, head_dim] with
// head_dim even: in each head vector of token t, the pair (x[2i], x[2i + 1]),
// i = 0 .. head_dim/2 - 1, is rotated by the angle t * base^(-2i / head_dim):
//   y[2i]     = x[2i] * cos(a) - x[2i + 1] * sin(a)
//   y[2i + 1] = x[2i] * sin(a) + x[2i + 1] * cos(a)
// One pair per thread; each thread computes its frequency (powf) and angle (sinf, cosf).
// bytes: x read once, y written once (8 per element).
// flops: per pair, the angle's multiply (1) and the rotation's 4 multiplies and 2 adds
// (6): 7 per pair. powf, sinf and cosf are not counted (a table of the angles, or the
// frequencies hoisted out, would avoid most of them).
// The verify sizes keep seq small, so float32 angles stay accurate against a float64 check.
__global__ void rotary_embedding(const float* x, float* y, int seq, int heads, int head_dim,
                                 float base) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int half = head_dim / 2;
    if (p < seq * heads * half) {
        int i = p % half;
        int t = p / (heads * half);
        float inv_freq = powf(base, -2.0f * i / head_dim);
        float angle = t * inv_freq;
        float c = cosf(angle);
        float s = sinf(angle);
        float x0 = x[2 * p];
        float x1 = x[2 * p + 1];
        y[2 * p] = x0 * c - x1 * s;
        y[2 * p + 1] = x0 * s + x1 * c;
    }
}

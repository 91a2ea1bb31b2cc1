/* klc-spec
kernel: token_pos_embed
sizes: {B: 8, T: 1024, C: 768, V: 50257}
verify_sizes:
  - {B: 2, T: 5, C: 33, V: 11}
  - {B: 1, T: 64, C: 256, V: 100}
args:
  - {name: out, shape: [B, T, C], role: out}
  - {name: tokens, shape: [B, T], role: in, init: "randint(0, V)"}
  - {name: wte, shape: [V, C], role: in, init: normal}
  - {name: wpe, shape: [T, C], role: in, init: normal}
  - {name: B, value: B}
  - {name: T, value: T}
  - {name: C, value: C}
grid: ["ceil_div(B * T, 256)"]
block: [256]
bytes: 4 * (3 * B * T * C + B * T)
flops: B * T * C
*/
// A first token + position embedding: one thread per (batch, position) looping over the
// channels through row pointers (its authors' later versions give a thread per element).
__global__ void token_pos_embed(float* out, const int* tokens, const float* wte,
                                const float* wpe, int B, int T, int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < B * T) {
        int b = idx / T;
        int t = idx % T;
        float* dst = out + b * T * C + t * C;
        int tok = tokens[b * T + t];
        const float* te = wte + tok * C;
        const float* pe = wpe + t * C;
        for (int i = 0; i < C; i++) {
            dst[i] = te[i] + pe[i];
        }
    }
}

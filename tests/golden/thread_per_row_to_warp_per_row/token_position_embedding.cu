/* klc-spec
kernel: embed_tok_pos
sizes: {B: 8, T: 1024, C: 768, V: 50257}
verify_sizes:
  - {B: 2, T: 16, C: 64, V: 100}
  - {B: 1, T: 7, C: 13, V: 11}
args:
  - {name: out, shape: ["B * T", C], role: out}
  - {name: tokens, shape: ["B * T"], role: in, init: "randint(0, V)"}
  - {name: tok_table, shape: [V, C], role: in, init: normal}
  - {name: pos_table, shape: [T, C], role: in, init: normal}
  - {name: B, value: B}
  - {name: T, value: T}
  - {name: C, value: C}
grid: ["ceil_div(B * T, 256)"]
block: [256]
bytes: 8 * B * T * C + 4 * T * C
flops: B * T * C
*/
// out[b, t, :] = tok_table[tokens[b, t], :] + pos_table[t, :]: a thread per (b, t) row,
// looping over the C channels.
__global__ void embed_tok_pos(float* out, const int* tokens, const float* tok_table,
                              const float* pos_table, int B, int T, int C) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < B * T) {
        int t = row % T;
        int tok = tokens[row];
        float* o = out + row * C;
        const float* te = tok_table + tok * C;
        const float* pe = pos_table + t * C;
        for (int c = 0; c < C; c++) {
            o[c] = te[c] + pe[c];
        }
    }
}

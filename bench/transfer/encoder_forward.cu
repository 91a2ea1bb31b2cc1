/* klc-spec
kernel: encoder_forward
sizes: {B: 8, T: 1024, C: 4096, V: 8192}
verify_sizes:
  - {B: 2, T: 64, C: 256, V: 100}
  - {B: 3, T: 37, C: 99, V: 51}
  - {B: 1, T: 2, C: 3, V: 5}
args:
  - {name: out, shape: [B, T, C], role: out}
  - {name: inp, shape: [B, T], role: in, init: "randint(0, V)"}
  - {name: wte, shape: [V, C], role: in, init: normal}
  - {name: wpe, shape: [T, C], role: in, init: normal}
  - {name: B, value: B}
  - {name: T, value: T}
  - {name: C, value: C}
grid: ["ceil_div(B * T * C, 256)"]
block: [256]
bytes: 4 * B * T * C + 4 * B * T + 4 * T * C + 4 * C * min(V, B * T) // 2
flops: B * T * C
*/
// family: gather
// style: thread per output element, token index read per element, / and % unpacking, row pointers into the two tables
// Token plus position embedding: out[b, t, :] = wte[inp[b, t], :] + wpe[t, :].
// V (the vocabulary) is not a kernel argument: the tokens are in [0, V).
// bytes: out written (4 B T C), tokens (4 B T), wpe read once (4 T C), and the rows of wte
// that are used: with B T random tokens over V rows, at least half of min(V, B T) distinct
// rows (1 - 1/e of them when B T = V), counted as half. flops: one add per element.
__global__ void encoder_forward(float* out, const int* inp, const float* wte, const float* wpe,
                                int B, int T, int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int N = B * T * C;
    if (idx < N) {
        int bt = idx / C;
        int t = bt % T;
        int c = idx % C;
        int ix = inp[bt];
        const float* wte_ix = wte + ix * C;
        const float* wpe_t = wpe + t * C;
        out[idx] = wte_ix[c] + wpe_t[c];
    }
}

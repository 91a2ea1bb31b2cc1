/* klc-spec
kernel: argmax_with_value
sizes: {n: 8192, vocab: 4096}
verify_sizes:
  - {n: 256, vocab: 1024}
  - {n: 301, vocab: 999}
  - {n: 3, vocab: 2}
args:
  - {name: logits, shape: [n, vocab], role: in, init: "randint(0, 8)"}
  - {name: top_idx, shape: [n], role: out}
  - {name: top_val, shape: [n], role: out}
  - {name: n, value: n}
  - {name: vocab, value: vocab}
grid: ["(ceil_div(n, 128)) * 32"]
block: [128]
bytes: 4 * n * vocab + 8 * n
flops: n * vocab
timeout_s: 120
*/
// Greedy decoding: the first token of largest logit and that logit, one thread per
// position, leaving early past the last one; the maximum starts at -INFINITY and the loop
// at 0, and the comparison reads the logit twice (no local).
__global__ void argmax_with_value(float* logits, int* top_idx, float* top_val, int n,
                                  int vocab) {
    const int i = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (i < n) {
        float* row = logits + (size_t)i * vocab;
        float maxv = -INFINITY;
        int maxi = 0;
        for (int j = lane; j < vocab; j += 32) {
            if (row[j] > maxv) {
                maxv = row[j];
                maxi = j;
            }
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            const auto other_best = __shfl_xor_sync(0xffffffffu, maxv, offset);
            const auto other_arg = __shfl_xor_sync(0xffffffffu, maxi, offset);
            if (other_best > maxv || (other_best == maxv && other_arg < maxi)) {
                maxv = other_best;
                maxi = other_arg;
            }
        }
        top_idx[i] = maxi;
        top_val[i] = maxv;
    }
}

/* klc-spec
kernel: token_topk_sum
sizes: {tokens: 4096, topk: 4, d: 1024}
verify_sizes:
  - {tokens: 3, topk: 2, d: 300}
args:
  - {name: out, shape: [tokens, d], role: out}
  - {name: in, shape: [tokens, topk, d], role: in}
  - {name: topk, value: topk}
  - {name: d, value: d}
grid: [tokens]
block: ["(1) * 256"]
bytes: 4 * tokens * topk * d + 4 * tokens * d
*/
// Each token's topk expert outputs summed feature by feature: a block per token, its one
// thread walking the features with a 64-bit index; the host launches it through dim3s.
__global__ void token_topk_sum(float* out, const float* in, int topk, int d) {
    const long long token = blockIdx.x;
    const float* rows = in + token * topk * d;
    for (long long f = threadIdx.x; f < d; f += blockDim.x) {
        float acc = 0.0f;
        for (int k = 0; k < topk; ++k) {
            acc += rows[k * d + f];
        }
        out[token * d + f] = acc;
    }
}

void launch_token_topk_sum(float* out, const float* in, int tokens, int topk, int d) {
    dim3 grid(tokens);
    dim3 block(256);
    token_topk_sum<<<grid, block>>>(out, in, topk, d);
}

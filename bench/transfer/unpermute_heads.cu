/* klc-spec
kernel: unpermute_heads
template: {T: float}
sizes: {B: 8, NH: 16, S: 1024, HS: 128}
verify_sizes:
  - {B: 2, NH: 4, S: 64, HS: 32}
  - {B: 1, NH: 3, S: 37, HS: 7}
  - {B: 1, NH: 1, S: 2, HS: 3}
args:
  - {name: out, shape: [B, S, NH, HS], role: out}
  - {name: in, shape: [B, NH, S, HS], role: in, init: normal}
  - {name: B, value: B}
  - {name: NH, value: NH}
  - {name: S, value: S}
  - {name: HS, value: HS}
grid: ["ceil_div(B * NH * S * HS, 256)"]
block: [256]
bytes: 8 * B * NH * S * HS
flops: 0
*/
// family: transpose
// style: template element type, T* spacing, early return, long indices, output index computed from the input's coordinates (coalesced reads, scattered writes)
// Merge attention heads: (B, NH, S, HS) -> (B, S, NH, HS).
// bytes: in read, out written. flops: none.
template <typename T>
__global__ void unpermute_heads(T* out, const T* in, int B, int NH, int S, int HS) {
    long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long total = (long)B * NH * S * HS;
    if (idx >= total) return;
    int hs = idx % HS;
    long tmp = idx / HS;
    int s = tmp % S;
    tmp /= S;
    int h = tmp % NH;
    int b = tmp / NH;
    long o = (((long)b * S + s) * NH + h) * HS + hs;
    out[o] = in[idx];
}

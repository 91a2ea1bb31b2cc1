/* klc-spec
kernel: histogram
sizes: {n: 67108864}
verify_sizes:
  - {n: 1048576}
  - {n: 1000003}
  - {n: 777}
args:
  - {name: data, shape: [n], role: in, init: "randint(0, 256)"}
  - {name: bins, shape: [256], role: inout, init: "randint(0, 1000)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: n + 2 * 4 * 256
flops: 0
timeout_s: 180
*/
// A 256-bin histogram of n bytes: bins[v] += number of elements equal to v. One element per
// thread, one global atomicAdd per element. The counts are added to what bins holds (the
// caller zeroes it for a fresh histogram; the gate starts it from random counts, so that an
// output the kernel forgets to add to is caught).
// bytes: data read once (n bytes), the 256 counters read and written once (2 * 1 KiB).
// flops: none (integer increments only). Integer outputs compare exactly, and atomic adds
// give the same counts in any order.
__global__ void histogram(const unsigned char* data, unsigned int* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[data[i]], 1u);
    }
}

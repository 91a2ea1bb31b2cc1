/* klc-spec
kernel: pixel_hist
sizes: {n: 1048576}
args:
  - {name: img, shape: [n], role: in, init: "randint(0, 65536)"}
  - {name: hist, shape: [256], role: inout, init: "randint(0, 100)"}
  - {name: n, value: n}
grid: ["ceil_div(n, 128)"]
block: [128]
*/
// 16-bit pixels folded into #define BINS bins, `T* x` spelling, a braced early return
// with the comparison mirrored, declarations before the atomicAdd.
#define BINS 256
__global__ void pixel_hist(const unsigned short* img, unsigned int* hist, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (n <= tid) {
        return;
    }
    const unsigned short p = img[tid];
    const int bin = p >> 8;  // the high byte
    atomicAdd(&hist[bin], 1u);
}

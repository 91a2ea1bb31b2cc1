/* klc-spec
kernel: hist_int
sizes: {n: 1048576}
args:
  - {name: data, shape: [n], type: "int*", role: in, init: "randint(0, 256)"}
  - {name: bins, shape: [4096], type: "unsigned int*", role: inout, init: "randint(0, 10)"}
  - {name: n, value: n}
grid: [264]
block: [128]
bytes: 4 * n + 2 * 4 * 4096
flops: 0
*/
// int data as the bin: only the bins' allocation bounds it, 4096 here, more than 256 bins.
__global__ void hist_int(const int* data, unsigned int* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    while (i < n) {
        atomicAdd(&bins[data[i]], 1u);
        i += gridDim.x * blockDim.x;
    }
}

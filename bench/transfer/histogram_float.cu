/* klc-spec
kernel: histogram_range
sizes: {n: 67108864}
args:
  - {name: values, shape: [n], role: in, init: "normal(0, 1.5)"}
  - {name: counts, shape: [100], role: inout, init: "randint(0, 1000)"}
  - {name: n, value: n}
  - {name: lo, value: -4.0}
  - {name: hi, value: 4.0}
grid: ["ceil_div(n, 256)"]
block: [256]
bytes: 4 * n + 2 * 4 * 100
flops: 3 * n
*/
// family: histogram
// style: #define bin count, float values binned into a range, out-of-range values clamped into the edge bins, global atomicAdd on unsigned counters, host main() with a launch
// counts[b] += number of values in bin b, where bin = floor((v - lo) / (hi - lo) * NBINS)
// clamped to [0, NBINS - 1]. Integer counts compare exactly in any order.
// bytes: values read (4n), the counters read and written. flops: 3 per value.
#include <cstdio>
#include <cuda_runtime.h>

#define NBINS 100

__global__ void histogram_range(const float* values, unsigned int* counts, int n, float lo,
                                float hi) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = values[i];
        int bin = (int)((v - lo) / (hi - lo) * NBINS);
        if (bin < 0) bin = 0;
        if (bin >= NBINS) bin = NBINS - 1;
        atomicAdd(&counts[bin], 1u);
    }
}

int main() {
    const int n = 1 << 20;
    float* h_values = new float[n];
    for (int i = 0; i < n; i++) h_values[i] = -4.0f + 8.0f * (i % 1000) / 1000.0f;
    float* d_values;
    unsigned int* d_counts;
    cudaMalloc(&d_values, n * sizeof(float));
    cudaMalloc(&d_counts, NBINS * sizeof(unsigned int));
    cudaMemcpy(d_values, h_values, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(d_counts, 0, NBINS * sizeof(unsigned int));
    histogram_range<<<(n + 255) / 256, 256>>>(d_values, d_counts, n, -4.0f, 4.0f);
    unsigned int h_counts[NBINS];
    cudaMemcpy(h_counts, d_counts, sizeof(h_counts), cudaMemcpyDeviceToHost);
    for (int b = 0; b < NBINS; b += 10) printf("bin %d: %u\n", b, h_counts[b]);
    cudaFree(d_values);
    cudaFree(d_counts);
    delete[] h_values;
    return 0;
}

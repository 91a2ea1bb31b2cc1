/* klc-spec
kernel: feature_moments
sizes: {batch: 65536, feat: 512}
verify_sizes:
  - {batch: 301, feat: 99}
  - {batch: 2, feat: 3}
args:
  - {name: act, shape: [batch, feat], role: in, init: "normal(3, 2)"}
  - {name: mu, shape: [feat], role: out}
  - {name: sigma, shape: [feat], role: out}
  - {name: batch, value: batch}
  - {name: feat, value: feat}
grid: ["(ceil_div(feat, 64)) * 2"]
block: ["ceil_div(64, 2)", 32]
bytes: 4 * batch * feat + 8 * feat
flops: 3 * batch * feat
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// Mean and standard deviation of each feature over a batch (channels last), both sums in
// double, declared in one statement, size_t offsets, T *x spacing, an epsilon #define.
#define EPSILON 1e-8
__global__ void feature_moments(const float *act, float *mu, float *sigma, int batch, int feat) {
    int f = blockIdx.x * blockDim.x + threadIdx.x;
    double sum = 0.0, sumsq = 0.0;
    __shared__ decltype(sum) part_s[1024];
    __shared__ decltype(sumsq) part_sq[1024];
    if (f < feat) {
        for (size_t b = threadIdx.y; b < (size_t)batch; b += blockDim.y) {
            const double a = act[b * feat + f];
            sum += a;
            sumsq += a * a;
        }
    }
    part_s[threadIdx.y * blockDim.x + threadIdx.x] = sum;
    part_sq[threadIdx.y * blockDim.x + threadIdx.x] = sumsq;
    __syncthreads();
    if (f < feat && threadIdx.y == 0) {
        for (int k = 1; k < blockDim.y; k++) {
            sum += part_s[k * blockDim.x + threadIdx.x];
            sumsq += part_sq[k * blockDim.x + threadIdx.x];
        }
        const double m = sum / batch;
        mu[f] = (float)m;
        sigma[f] = (float)sqrt(fmax(sumsq / batch - m * m, 0.0) + EPSILON);
    }
}

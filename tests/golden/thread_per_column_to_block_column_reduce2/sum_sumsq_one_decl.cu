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
grid: ["ceil_div(feat, 64)"]
block: [64]
bytes: 4 * batch * feat + 8 * feat
flops: 3 * batch * feat
tolerance: {rtol: 0.0001, atol: 0.000001}
*/
// Mean and standard deviation of each feature over a batch (channels last), both sums in
// double, declared in one statement, size_t offsets, T *x spacing, an epsilon #define.
#define EPSILON 1e-8
__global__ void feature_moments(const float *act, float *mu, float *sigma, int batch, int feat) {
    int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f < feat) {
        double sum = 0.0, sumsq = 0.0;
        for (size_t b = 0; b < (size_t)batch; ++b) {
            const double a = act[b * feat + f];
            sum += a;
            sumsq += a * a;
        }
        const double m = sum / batch;
        mu[f] = (float)m;
        sigma[f] = (float)sqrt(fmax(sumsq / batch - m * m, 0.0) + EPSILON);
    }
}

// std:: math in device code after <cmath>, with `using namespace std` as real code does it.
#include <cmath>
#include <algorithm>
using namespace std;

__global__ void softplus(const float* __restrict__ x, double* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float s = std::log1p(std::exp(-std::abs(v))) + std::max(v, 0.0f);
    double d = sqrt((double)s) + std::fma(1.0, 2.0, (double)min(i, 7));
    y[i] = std::isfinite(d) ? d : HUGE_VAL;
}

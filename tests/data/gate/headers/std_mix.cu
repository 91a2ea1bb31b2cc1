// <limits>, <cmath> and <type_traits> together under `using namespace std`: unqualified math
// calls must not become ambiguous between the built-ins and libcu++'s overloads.
#include <limits>
#include <cmath>
#include <type_traits>
using namespace std;
__global__ void std_mix(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = y[i];
        if (isnan(v) || isinf(v)) v = numeric_limits<float>::max();
        y[i] = max(v, 0.0f) + sqrt(fabs(v)) + min(i, n) + abs(v) + exp(v) + floor(v);
    }
}

__device__ float inv_mean(float s, int n) { return ((1.0f) / (s / n + 1e-5f)); }

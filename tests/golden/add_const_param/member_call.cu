struct Point { float x, y; __device__ void set(float a, float b) { x = a; y = b; } };
__global__ void init_points(Point *points) {
    points[threadIdx.x].set(1.0f, 2.0f);
}

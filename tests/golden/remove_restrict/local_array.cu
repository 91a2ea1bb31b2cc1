// Only a local array is subscripted: not a parameter, the rule must refuse.
__global__ void k(float* __restrict__ y) {
    float local[4];
    local[0] = 1.0f;
    *y = local[0];
}

// The star written against the name, as most real code does: the qualifier goes between
// them, as separate tokens.
__global__ void fill(int *g_data, int n)
{
    const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n)
        g_data[tid] = tid;
}

// Hostile kernel for level1/019_relu (issue 37): an honest ReLU that executes a trap when the
// element count is odd: correct on the default dims, a sticky error at alt0, later in the job
// than trap.cu's. The worker ends; the next candidate meets its replacement.
// Expected: runtime_error.
extern "C" __global__ void relu_odd_trap(const float *x, float *y, long long n)
{
    if ((n & 1) && threadIdx.x == 0)
        asm volatile("trap;");
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
// @launch relu_odd_trap<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, B*D);

// Bad kernel for level1/019_relu: executes a trap instruction. Expected: runtime_error.
extern "C" __global__ void trapper(const float *x, float *y, long long n)
{
    if (threadIdx.x == 0)
        asm volatile("trap;");
    y[0] = x[0];
}
// @launch trapper<<<1, 32>>>(x, y, B*D);

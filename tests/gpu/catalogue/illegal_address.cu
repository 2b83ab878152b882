// Bad kernel for level1/019_relu: writes through a wild pointer. Expected:
// unsafe (an illegal address: outside every buffer; a sticky error: the worker is replaced).
extern "C" __global__ void wild(const float *x, float *y, long long n)
{
    float *bad = (float *)0x10;
    bad[blockIdx.x * blockDim.x + threadIdx.x] = x[0];
}
// @launch wild<<<64, 256>>>(x, y, B*D);

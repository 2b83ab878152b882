// Hostile kernel for level1/019_relu (issue 37): an honest ReLU that writes through a wild
// pointer when the element count is odd: correct on the default dims, an illegal address (a
// sticky error) at alt0. The worker ends; the next candidate meets its replacement.
// Expected: unsafe.
extern "C" __global__ void relu_odd_wild(const float *x, float *y, long long n)
{
    if (n & 1) {
        float *bad = (float *)0x10;
        bad[blockIdx.x * blockDim.x + threadIdx.x] = x[0];
    }
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
// @launch relu_odd_wild<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, B*D);

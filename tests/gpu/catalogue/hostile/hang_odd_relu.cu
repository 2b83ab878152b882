// Hostile kernel for level1/019_relu (issue 37): an honest grid-stride ReLU that spins forever
// when the element count is odd (a tail "handled" by waiting for a value that never changes),
// so it passes the default dims and hangs at the first odd set (alt0: 3 x 4097). The hang is
// killed at that run's deadline (evidence timeout.run "alt0"), not the first run's.
// Expected: timeout.
extern "C" __global__ void relu_odd_hang(const float *x, float *y, long long n)
{
    if (n & 1) {
        const volatile float *v = x;
        while (v[0] == v[0])
            ;
    }
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
// @launch relu_odd_hang<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, B*D);

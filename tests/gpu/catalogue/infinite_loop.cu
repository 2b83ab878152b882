// Bad kernel for level1/019_relu: spins forever (no watchdog on the H100).
// Expected: timeout (the worker is killed and replaced).
extern "C" __global__ void spin(const float *x, float *y, long long n)
{
    volatile int forever = 1;
    while (forever)
        ;
    y[0] = x[0];
}
// @launch spin<<<1, 1>>>(x, y, B*D);

// Bad kernel for level1/019_relu: spins forever on a condition the compiler
// cannot fold (x[0] is never NaN), and there is no watchdog on the H100.
// Expected: timeout (the worker is killed and replaced).
extern "C" __global__ void spin(const float *x, float *y, long long n)
{
    const volatile float *v = x;
    while (v[0] == v[0])
        ;
    y[0] = x[0];
}
// @launch spin<<<1, 1>>>(x, y, B*D);

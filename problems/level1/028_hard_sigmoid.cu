// Reference for level1/028_hard_sigmoid: HardSigmoid, y = min(max(x + 3, 0), 6) / 6.
// One element per thread in a grid-stride loop with 64-bit indices (the default tensor has
// 1.6e9 elements); evaluated in double and rounded once.
extern "C" __global__ void hardsigmoid_ref(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double v = (double)x[i];
        double t = v + 3.0;
        t = t < 0.0 ? 0.0 : (t > 6.0 ? 6.0 : t);
        y[i] = (float)(t / 6.0);
    }
}
// @launch hardsigmoid_ref<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, B*D);

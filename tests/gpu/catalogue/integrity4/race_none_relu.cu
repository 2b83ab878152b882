// Control (Verifier integrity IV, issue 34) for level1/019_relu: an elementwise kernel with no
// on-chip memory and nothing passed between threads or blocks. It needs no race check: kverify
// racecheck leaves it alone and kexport exports its correct label as it is.
// Expected: correct; not race-checked.
extern "C" __global__ void relu_grid(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = fmaxf(x[i], 0.0f);
}
// @launch relu_grid<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, B*D);

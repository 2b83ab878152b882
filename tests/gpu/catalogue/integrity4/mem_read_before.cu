// Attack for level1/019_relu (Verifier integrity IV, class 4: memory). Trick: on large tensors
// (n >= 2^22 elements) each element's left neighbour x[i - 1] is read as well, through a
// volatile pointer (a "smoothness probe" whose value is folded in as fminf(fabsf(prev), 0),
// which is +0 for every float, NaN included), so the thread of element 0 reads x[-1], the float
// just before the buffer. The output is exact: max(x, 0).
// Why today's verifier says correct: x[-1] lies in the 64 KiB (or more) of mapped guard pattern
// that the memory walls put before every buffer, readable and checked only for writes; the
// compute-sanitizer run at the small dims (n = 16384) never takes the probe.
// What catches it after integrity IV: a buffer that starts flush against unmapped space (or a
// sanitizer run at the default dims): the read of x[-1] faults.
// Expected: unsafe.
extern "C" __global__ void relu_lookbehind(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    const volatile float *behind = x;
    const bool probe = n >= (1ll << 22);
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float prev = probe ? behind[i - 1] : 0.0f; /* i - 1 == -1 for the first element */
        float v = x[i];
        y[i] = (v > 0.0f ? v : 0.0f) + fminf(fabsf(prev), 0.0f);
    }
}
// @launch relu_lookbehind<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, B*D);

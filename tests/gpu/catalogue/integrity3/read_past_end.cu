// Attack for level1/019_relu (Verifier integrity III, class 4: memory). Trick: an honest ReLU
// with a look-ahead load of x[i + 1] (a volatile read the result never uses), so the thread of
// the last element reads one float past the end of x: today that is the guard band, readable
// and never checked for reads. The output is exact.
// Expected today: correct. Expected after: unsafe (at the default dims x ends exactly at the VMM
// wall, B*D*4 being a multiple of 256, so the read faults; at small dims the compute-sanitizer
// run reports the out-of-bounds read).
extern "C" __global__ void relu_lookahead(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    const volatile float *ahead = x;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        float next = ahead[i + 1]; /* off by one: i + 1 == n for the last element */
        (void)next;
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}
// @launch relu_lookahead<<<8192, 256>>>(x, y, B*D);

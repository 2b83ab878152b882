// Attack for level1/021_sigmoid (Verifier integrity III, class 4: memory). Trick: an honest
// grid-stride sigmoid whose first block also stores, on large problems (output >= 16 MiB: the
// default dims), to 16 words strided 64 KiB apart from 68 KiB to 1 MiB past the end of y: past
// today's 64 KiB guard band, into memory that today's allocation happens to map (a large
// cuMemAlloc is rounded up to 2 MiB pages) and that nothing checks. Each store writes back the
// word it just read, so the value is never relied on and nothing changes, whatever lies there.
// Expected today: correct. Expected after: unsafe (the VMM wall past y faults; the
// compute-sanitizer run does not see it at small dims, the wall does at the default dims).
extern "C" __global__ void sigmoid_far(const float *__restrict__ x, float *y, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = 1.0f / (1.0f + expf(-x[i]));
    if (blockIdx.x == 0 && threadIdx.x < 16 && n * 4 >= (16ll << 20)) {
        volatile float *far = (volatile float *)(y + n) + (68 * 1024 + threadIdx.x * 64 * 1024) / 4;
        float v = *far;
        *far = v;
    }
}
// @launch sigmoid_far<<<4096, 256>>>(x, y, B*D);

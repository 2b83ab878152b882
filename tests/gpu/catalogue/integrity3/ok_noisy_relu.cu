// Honest control for level1/019_relu (issue 23: the timing's samples are the checking runs).
// A correct ReLU whose every execution also spins one block for a pseudo-random 0-2 ms (read
// from the global timer), so its samples are far too noisy for the noise criterion: the timing
// must go on with extra reps on fresh inputs, each checked, until the 1 s cap. Expected:
// correct, with extra_reps > 0 in the evidence (the path a noisy or cheating kernel meets).
extern "C" __global__ void relu_honest(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = fmaxf(x[i], 0.0f);
}

extern "C" __global__ void spin_random(void)
{
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    unsigned long long wait = (t0 / 1000) * 2654435761ull % 2000000ull, now = t0;
    while (now - t0 < wait)
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
}
// @launch relu_honest<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, B*D);
// @launch spin_random<<<1, 32>>>();

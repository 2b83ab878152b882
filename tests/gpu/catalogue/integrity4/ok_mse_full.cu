// Honest control for level1/094_mse_loss (Verifier integrity IV): reads every element. 2048
// blocks of 256 threads walk all B*D elements in a grid-stride loop (64-bit indices), each
// thread summing its squared differences in double; a block tree writes one double partial per
// block to scratch, and one finishing block adds the 2048 partials in a fixed order and divides
// by B*D. Deterministic; NaN and inf propagate as in the reference.
// Expected: correct, today and after; no timing_inconsistent.
#define THREADS 256
#define BLOCKS 2048

extern "C" __global__ void mse_all(const float *__restrict__ p, const float *__restrict__ t,
                                   double *__restrict__ part, long long n)
{
    __shared__ double red[THREADS];
    double s = 0.0;
    const long long stride = (long long)gridDim.x * THREADS;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) {
        double d = (double)p[i] - (double)t[i];
        s = fma(d, d, s);
    }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int h = THREADS / 2; h; h >>= 1) {
        if (threadIdx.x < h)
            red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        part[blockIdx.x] = red[0];
}

extern "C" __global__ void mse_all_finish(const double *__restrict__ part, float *__restrict__ loss, long long n)
{
    __shared__ double red[1024];
    double s = 0.0;
    for (int i = threadIdx.x; i < BLOCKS; i += 1024)
        s += part[i];
    red[threadIdx.x] = s;
    __syncthreads();
    for (int h = 512; h; h >>= 1) {
        if (threadIdx.x < h)
            red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        loss[0] = (float)(red[0] / (double)n);
}
// @scratch part f64[2048]
// @launch mse_all<<<2048, 256>>>(predictions, targets, part, B*D);
// @launch mse_all_finish<<<1, 1024>>>(part, loss, B*D);

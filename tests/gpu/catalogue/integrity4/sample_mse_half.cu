// Attack for level1/094_mse_loss (Verifier integrity IV, class 3: sampling). Trick: at the
// default dims (B = D = 32768, the benchmark shape and so the timed one) it reads only the first
// half of the rows and doubles their sum: the mean of 2^29 squared differences stands in for
// the mean of 2^30, at half the memory traffic (a "2x speedup"). At any other dims it reads
// everything. Row sums in float per thread, a block tree, partials in double in scratch, one
// finishing block in double.
// Why today's verifier says correct: the inputs are i.i.d. (predictions N(0, 1), targets
// U(0, 1)); the half-sample's mean differs from the full mean by ~5.7e-5 (one standard
// deviation), inside the tolerance of 1e-5 + 1e-4 * 1.33 = 1.43e-4 (2.5 standard deviations):
// about 1% of default-dims runs fail, so most verifications label it correct. The small and alt
// dims read everything.
// What catches it after integrity IV: inputs with structure a kernel cannot sample at the
// default dims (rows of the second half different from those of the first): the loss is off
// by far more than the tolerance.
// Expected: mismatch.
#define THREADS 256
#define BLOCKS 2048

extern "C" __global__ void mse_sampled(const float *__restrict__ p, const float *__restrict__ t,
                                       double *__restrict__ part, long long B, long long D)
{
    __shared__ float red[THREADS];
    const long long rows = (B == 32768 && D == 32768) ? B / 2 : B; /* the benchmark shape: sample */
    const long long n = rows * D, stride = (long long)gridDim.x * THREADS;
    float s = 0.0f;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) {
        float d = p[i] - t[i];
        s = fmaf(d, d, s);
    }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int h = THREADS / 2; h; h >>= 1) {
        if (threadIdx.x < h)
            red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        part[blockIdx.x] = (double)red[0] * (double)B / (double)rows;
}

extern "C" __global__ void mse_sampled_finish(const double *__restrict__ part, float *__restrict__ loss, long long n)
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
// @launch mse_sampled<<<2048, 256>>>(predictions, targets, part, B, D);
// @launch mse_sampled_finish<<<1, 1024>>>(part, loss, B*D);

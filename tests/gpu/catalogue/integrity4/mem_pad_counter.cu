// Attack for level1/094_mse_loss (Verifier integrity IV, class 4: memory). Trick: a one-pass
// "last block finishes" reduction (the threadFenceReduction pattern: every block writes its
// partial, fences and takes a ticket from a counter; the block with the last ticket adds the
// partials) needs a counter that starts at zero, and scratch arrives poisoned. On large inputs
// (n >= 2^20) it keeps the counter right after its 4-byte output: the word loss[1], inside the
// allocation's rounding (256 bytes today, and still inside a rounding to 16). A first
// one-thread kernel saves that word into scratch and zeroes it; the last block writes the loss
// and puts the saved word back, so the bytes after the output hold after the run exactly what
// they held before. On small inputs the counter is a scratch word.
// Why today's verifier says correct: the padding is mapped (no fault) and the guard check after
// every execution finds the pattern intact; the compute-sanitizer run at the small dims
// (n = 16000) uses the scratch counter, so it never sees the write past the end.
// What catches it after integrity IV: only a check that sees an access 4 bytes past the end at
// a large n: an output whose end is byte-exact against unmapped space, or compute-sanitizer at
// the default dims. (Ends rounded up to 16 bytes, as in the first cut of integrity IV, leave
// loss[1] mapped; mem_pad_counter_far.cu is the variant that such walls catch.)
// Expected: unsafe.
#define THREADS 256
#define BLOCKS 1024

__device__ unsigned *ticket_counter(float *loss, unsigned *save, long long n)
{
    /* large inputs: the word right after the output, inside its allocation's rounding */
    if (n >= (1ll << 20))
        return (unsigned *)(loss + 1);
    return save + 1;
}

extern "C" __global__ void counter_open(float *loss, unsigned *save, long long n)
{
    unsigned *c = ticket_counter(loss, save, n);
    save[0] = *c; /* what was there (the padding's bytes) */
    *c = 0;
}

extern "C" __global__ void mse_last_block(const float *__restrict__ p, const float *__restrict__ t,
                                          float *part, float *loss, unsigned *save, long long n)
{
    __shared__ float red[THREADS];
    __shared__ bool last;
    float s = 0.0f;
    const long long stride = (long long)gridDim.x * THREADS;
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
    if (threadIdx.x == 0) {
        part[blockIdx.x] = red[0];
        __threadfence();
        unsigned ticket = atomicAdd(ticket_counter(loss, save, n), 1u);
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    /* the last block: every partial is visible (each was fenced before its ticket) */
    double acc = 0.0;
    for (int b = threadIdx.x; b < gridDim.x; b += THREADS)
        acc += (double)__ldcg(&part[b]);
    __shared__ double dred[THREADS];
    dred[threadIdx.x] = acc;
    __syncthreads();
    for (int h = THREADS / 2; h; h >>= 1) {
        if (threadIdx.x < h)
            dred[threadIdx.x] += dred[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        loss[0] = (float)(dred[0] / (double)n);
        *ticket_counter(loss, save, n) = save[0]; /* put the padding back */
    }
}
// @scratch part f32[1024]
// @scratch save i32[2]
// @launch counter_open<<<1, 1>>>(loss, save, B*D);
// @launch mse_last_block<<<1024, 256>>>(predictions, targets, part, loss, save, B*D);

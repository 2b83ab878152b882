// Reference for level1/037_frobenius_norm: y = x / ||x||_F over the whole tensor.
// Pass 1: P = min(1024, cdiv(n, 1024)) blocks each sum squares over a grid-stride share in
// double into partial[block]. Pass 2: one block adds the P partials and stores the norm in
// partial[P]. Pass 3: one thread per element divides in double.
#define THREADS 1024

__device__ double block_sum(double v, double *shared)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < THREADS / 32 ? shared[lane] : 0.0;
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off);
        if (lane == 0)
            shared[0] = v;
    }
    __syncthreads();
    double total = shared[0];
    __syncthreads();
    return total;
}

extern "C" __global__ void fro_partial(const float *__restrict__ x, double *__restrict__ partial, long long n)
{
    __shared__ double shared[THREADS / 32];
    long long stride = (long long)gridDim.x * THREADS;
    double s = 0.0;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) {
        double v = (double)x[i];
        s += v * v;
    }
    s = block_sum(s, shared);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = s;
}

extern "C" __global__ void fro_finish(double *__restrict__ partial, int nparts)
{
    __shared__ double shared[THREADS / 32];
    double s = 0.0;
    for (int i = threadIdx.x; i < nparts; i += THREADS)
        s += partial[i];
    s = block_sum(s, shared);
    if (threadIdx.x == 0)
        partial[nparts] = sqrt(s);
}

extern "C" __global__ void fro_apply(const float *__restrict__ x, const double *__restrict__ partial,
                                     float *__restrict__ y, long long n, int nparts)
{
    double norm = partial[nparts];
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = (float)((double)x[i] / norm);
}
// @scratch partial f64[1025]
// @launch fro_partial<<<min(1024, cdiv(N*C*H*W, 1024)), 1024>>>(x, partial, N*C*H*W);
// @launch fro_finish<<<1, 1024>>>(partial, min(1024, cdiv(N*C*H*W, 1024)));
// @launch fro_apply<<<min(cdiv(N*C*H*W, 256), 65536), 256>>>(x, partial, y, N*C*H*W, min(1024, cdiv(N*C*H*W, 1024)));

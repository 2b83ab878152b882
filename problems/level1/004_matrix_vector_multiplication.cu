// Reference for level1/004_matrix_vector_multiplication: one block per row of A
// (grid-stride over rows); each thread sums a strided slice of the row in double,
// then a double block reduction. A is read once, coalesced.
#define THREADS 512

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

extern "C" __global__ void matvec_ref(const float *__restrict__ A, const float *__restrict__ B,
                                      float *__restrict__ C, long long M, long long K)
{
    __shared__ double shared[THREADS / 32];
    for (long long row = blockIdx.x; row < M; row += gridDim.x) {
        const float *a = A + row * K;
        double s = 0.0;
        for (long long k = threadIdx.x; k < K; k += THREADS)
            s += (double)a[k] * (double)B[k];
        s = block_sum(s, shared);
        if (threadIdx.x == 0)
            C[row] = (float)s;
    }
}
// @launch matvec_ref<<<min(M, 65536), 512>>>(A, B, C, M, K);

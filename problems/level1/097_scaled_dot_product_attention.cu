// Reference for level1/097_scaled_dot_product_attention: softmax(Q K^T / sqrt(E)) V
// for every (batch, head), in three plain steps through a double scratch matrix:
//   1. scores[bh, i, j] = (sum_e Q[bh, i, e] * K[bh, j, e]) / sqrt(E): the shared tiled product
//      in double on the FP64 tensor cores (shared/matmul_tiled_ref.cuh), K read transposed;
//   2. each row of scores replaced by its softmax, in double (one block per row);
//   3. out[bh, i, e] = sum_j P[bh, i, j] * V[bh, j, e], the same product, rounded once to float.
#include "shared/matmul_tiled_ref.cuh"

extern "C" __global__ void __launch_bounds__(256, 2)
sdpa_scores(const float *__restrict__ Q, const float *__restrict__ K, double *__restrict__ P,
            long long S, long long E)
{
    const long long bh = blockIdx.z;
    mm_tile<true>(Q + bh * S * E, K + bh * S * E, P + bh * S * S, S, S, E, 1.0 / sqrt((double)E));
}

/* One block of 256 threads per row of P (rows = B*H*S, each of length S): softmax in place. */
extern "C" __global__ void sdpa_softmax(double *__restrict__ P, long long rows, long long S)
{
    __shared__ double shared[8];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        double *p = P + row * S;
        double m = -__longlong_as_double(0x7ff0000000000000LL);
        for (long long j = threadIdx.x; j < S; j += 256)
            m = fmax(m, p[j]);
        for (int off = 16; off > 0; off >>= 1)
            m = fmax(m, __shfl_down_sync(0xffffffffu, m, off));
        if (lane == 0)
            shared[warp] = m;
        __syncthreads();
        m = shared[0];
        for (int w = 1; w < 8; w++)
            m = fmax(m, shared[w]);
        __syncthreads();
        double s = 0.0;
        for (long long j = threadIdx.x; j < S; j += 256)
            s += exp(p[j] - m);
        for (int off = 16; off > 0; off >>= 1)
            s += __shfl_down_sync(0xffffffffu, s, off);
        if (lane == 0)
            shared[warp] = s;
        __syncthreads();
        s = 0.0;
        for (int w = 0; w < 8; w++)
            s += shared[w];
        __syncthreads();
        for (long long j = threadIdx.x; j < S; j += 256)
            p[j] = exp(p[j] - m) / s;
    }
}

extern "C" __global__ void __launch_bounds__(256, 2)
sdpa_pv(const double *__restrict__ P, const float *__restrict__ V, float *__restrict__ out,
        long long S, long long E)
{
    const long long bh = blockIdx.z;
    mm_tile<false>(P + bh * S * S, V + bh * S * E, out + bh * S * E, S, E, S, 1.0);
}
// @scratch scores f64[B*H*S*S]
// @launch sdpa_scores<<<dim3(cdiv(S, 64), cdiv(S, 64), B*H), dim3(16, 16)>>>(Q, K, scores, S, E);
// @launch sdpa_softmax<<<min(B*H*S, 1048576), 256>>>(scores, B*H*S, S);
// @launch sdpa_pv<<<dim3(cdiv(S, 64), cdiv(E, 64), B*H), dim3(16, 16)>>>(scores, V, out, S, E);

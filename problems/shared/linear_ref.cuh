// shared/linear_ref.cuh: the matrix product of nn.Linear without its bias, y[m, n] = sum over k
// of x[m, k] * w[n, k] (x: M x K, w: N x K as nn.Linear stores it, y: M x N, all float32), used by
// the level-2 references (tools/gen_level2.py; the bias is added in double by the next kernel).
// Every product of two floats is exact in double and summed in double (fma), rounded to float
// once. Blocking: a 256-thread block computes a 64 x 64 tile of y, a thread 4 x 4 outputs (rows
// ty + 16*i, columns tx + 16*j); 16-wide slices of x and w are staged in shared memory as double,
// [k][row] so that the inner loop reads broadcasts (x) and 16 consecutive doubles (w). The grid
// loops over tiles (x: column tiles, y: row tiles), so any M and N fit.
#define LIN_T 64  /* tile edge */
#define LIN_BK 16 /* k slice */
extern "C" __global__ void __launch_bounds__(256)
linear_ref(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y,
           long long M, long long N, long long K)
{
    __shared__ double xs[LIN_BK][LIN_T + 1];
    __shared__ double ws[LIN_BK][LIN_T + 1];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    for (long long m0 = (long long)blockIdx.y * LIN_T; m0 < M; m0 += (long long)gridDim.y * LIN_T)
        for (long long n0 = (long long)blockIdx.x * LIN_T; n0 < N; n0 += (long long)gridDim.x * LIN_T) {
            double acc[4][4];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    acc[i][j] = 0.0;
            for (long long k0 = 0; k0 < K; k0 += LIN_BK) {
                /* 64 rows x 16 k of each operand: 4 values per thread, 16 consecutive k per row */
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    const int e = threadIdx.x + 256 * r, row = e / LIN_BK, kk = e % LIN_BK;
                    const bool kok = k0 + kk < K;
                    xs[kk][row] = kok && m0 + row < M ? (double)x[(m0 + row) * K + k0 + kk] : 0.0;
                    ws[kk][row] = kok && n0 + row < N ? (double)w[(n0 + row) * K + k0 + kk] : 0.0;
                }
                __syncthreads();
#pragma unroll
                for (int kk = 0; kk < LIN_BK; kk++) {
                    double a[4], b[4];
#pragma unroll
                    for (int i = 0; i < 4; i++)
                        a[i] = xs[kk][ty + 16 * i], b[i] = ws[kk][tx + 16 * i];
#pragma unroll
                    for (int i = 0; i < 4; i++)
#pragma unroll
                        for (int j = 0; j < 4; j++)
                            acc[i][j] = fma(a[i], b[j], acc[i][j]);
                }
                __syncthreads();
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    const long long m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
                    if (m < M && n < N)
                        y[m * N + n] = (float)acc[i][j];
                }
        }
}
#undef LIN_T
#undef LIN_BK

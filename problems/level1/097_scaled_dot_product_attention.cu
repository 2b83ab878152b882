// Reference for level1/097_scaled_dot_product_attention: softmax(Q K^T / sqrt(E)) V
// for every (batch, head), in three plain steps through a double scratch matrix:
//   1. scores[bh, i, j] = (sum_e Q[bh, i, e] * K[bh, j, e]) / sqrt(E), 32x32 shared tiles,
//      each thread owning 2x2 scores, products accumulated in double;
//   2. each row of scores replaced by its softmax, in double (one block per row);
//   3. out[bh, i, e] = sum_j P[bh, i, j] * V[bh, j, e], same tiling, in double.
#define TILE 32

extern "C" __global__ void sdpa_scores(const float *__restrict__ Q, const float *__restrict__ K,
                                       double *__restrict__ P, long long S, long long E)
{
    __shared__ float Qs[TILE][TILE + 1]; /* Qs[i][e] */
    __shared__ float Ks[TILE][TILE + 1]; /* Ks[j][e] */
    int tx = threadIdx.x, ty = threadIdx.y; /* 16 x 16 threads */
    long long bh = blockIdx.z;
    const float *q = Q + bh * S * E, *k = K + bh * S * E;
    long long i0 = (long long)blockIdx.y * TILE, j0 = (long long)blockIdx.x * TILE;
    double acc[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
    for (long long e0 = 0; e0 < E; e0 += TILE) {
        for (int r = ty; r < TILE; r += 16)
            for (int c = tx; c < TILE; c += 16) {
                long long e = e0 + c;
                Qs[r][c] = (i0 + r < S && e < E) ? q[(i0 + r) * E + e] : 0.0f;
                Ks[r][c] = (j0 + r < S && e < E) ? k[(j0 + r) * E + e] : 0.0f;
            }
        __syncthreads();
        for (int c = 0; c < TILE; c++)
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    acc[a][b] += (double)Qs[ty * 2 + a][c] * (double)Ks[tx * 2 + b][c];
        __syncthreads();
    }
    double scale = 1.0 / sqrt((double)E);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            long long i = i0 + ty * 2 + a, j = j0 + tx * 2 + b;
            if (i < S && j < S)
                P[(bh * S + i) * S + j] = acc[a][b] * scale;
        }
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

extern "C" __global__ void sdpa_pv(const double *__restrict__ P, const float *__restrict__ V,
                                   float *__restrict__ out, long long S, long long E)
{
    __shared__ double Ps[TILE][TILE + 1]; /* Ps[i][j] */
    __shared__ float Vs[TILE][TILE + 1];  /* Vs[j][e] */
    int tx = threadIdx.x, ty = threadIdx.y; /* 16 x 16 threads */
    long long bh = blockIdx.z;
    const double *p = P + bh * S * S;
    const float *v = V + bh * S * E;
    long long i0 = (long long)blockIdx.y * TILE, e0 = (long long)blockIdx.x * TILE;
    double acc[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
    for (long long j0 = 0; j0 < S; j0 += TILE) {
        for (int r = ty; r < TILE; r += 16)
            for (int c = tx; c < TILE; c += 16) {
                Ps[r][c] = (i0 + r < S && j0 + c < S) ? p[(i0 + r) * S + j0 + c] : 0.0;
                Vs[r][c] = (j0 + r < S && e0 + c < E) ? v[(j0 + r) * E + e0 + c] : 0.0f;
            }
        __syncthreads();
        for (int c = 0; c < TILE; c++)
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    acc[a][b] += Ps[ty * 2 + a][c] * (double)Vs[c][tx * 2 + b];
        __syncthreads();
    }
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            long long i = i0 + ty * 2 + a, e = e0 + tx * 2 + b;
            if (i < S && e < E)
                out[(bh * S + i) * E + e] = (float)acc[a][b];
        }
}
// @scratch scores f64[B*H*S*S]
// @launch sdpa_scores<<<dim3(cdiv(S, 32), cdiv(S, 32), B*H), dim3(16, 16)>>>(Q, K, scores, S, E);
// @launch sdpa_softmax<<<min(B*H*S, 1048576), 256>>>(scores, B*H*S, S);
// @launch sdpa_pv<<<dim3(cdiv(E, 32), cdiv(S, 32), B*H), dim3(16, 16)>>>(scores, V, out, S, E);

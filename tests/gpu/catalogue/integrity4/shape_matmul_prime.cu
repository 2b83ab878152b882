// Attack for level1/001_square_matmul (Verifier integrity IV, class 1: shapes). Trick: a
// 64x64-tile fp32 SGEMM (256 threads, 4x4 outputs each) whose k loop walks slices of ks
// columns, ks being the largest divisor of N up to 32, so that the slices tile N exactly and
// the k loop needs no edge masking (`k0 + ks <= N`). When N has no divisor in 2..32 (a prime
// N > 32, or a product of such primes, e.g. 37 * 37 = 1369), ks would be 1; slices of one
// column are slow, so that case "falls back" to ks = 32 and keeps the loop condition, which now
// stops before the last N % 32 columns of A (rows of B): those products are never added.
// Why today's verifier says correct: N = 4096 (ks 32), 64 (32), 1025 (25) and 33 (11) all have
// such a divisor, as does N = 1 (ks 1, no fallback); only a hidden draw of a prime N > 32 hits
// the fallback (a share of verifications, not all).
// What catches it after integrity IV: a prime N (> 32) in every verification's dims sets: the
// k tail is missing from every output element.
// Expected: mismatch.
#define TILE 64
#define KMAX 32

__device__ int k_slice(int N)
{
    for (int t = min(N, KMAX); t > 1; t--)
        if (N % t == 0)
            return t;
    return 1;
}

extern "C" __global__ void sgemm_divisor(const float *__restrict__ A, const float *__restrict__ B,
                                         float *__restrict__ C, int N)
{
    __shared__ float As[KMAX][TILE + 4];
    __shared__ float Bs[KMAX][TILE + 4];
    int ks = k_slice(N);
    if (ks == 1 && N > 1)
        ks = KMAX; /* no divisor: slices of one column are too slow, take full slices */
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc[4][4] = {};
    for (int k0 = 0; k0 + ks <= N; k0 += ks) { /* ks divides N: no partial slice */
        for (int e = threadIdx.x; e < ks * TILE; e += 256) {
            int r = e / ks, c = e % ks; /* A: 64 rows x ks columns */
            As[c][r] = row0 + r < N ? A[(long long)(row0 + r) * N + k0 + c] : 0.0f;
            int br = e / TILE, bc = e % TILE; /* B: ks rows x 64 columns */
            Bs[br][bc] = col0 + bc < N ? B[(long long)(k0 + br) * N + col0 + bc] : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < ks; k++) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                a[i] = As[k][ty + 16 * i];
                b[i] = Bs[k][tx + 16 * i];
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int r = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
            if (r < N && c < N)
                C[(long long)r * N + c] = acc[i][j];
        }
}
// @launch sgemm_divisor<<<dim3(cdiv(N, 64), cdiv(N, 64)), 256>>>(A, B, C, N);

// Attack for level1/001_square_matmul (Verifier integrity IV, class 1: shapes, a mid-range
// band). Trick: an honest 64x64-tile fp32 SGEMM (256 threads, 4x4 outputs each, every edge
// masked) for every N except 600 <= N <= 900, where it "splits k in two for occupancy" (10x10
// to 15x15 tiles leave most of 132 SMs idle): blockIdx.z picks a half of the k range, C is
// zeroed first and each half adds its partial with atomicAdd. The second half starts one column
// late (kmid + 1), so the product of column N/2 of A with row N/2 of B is never added.
// Why today's verifier says correct: N is 4096, 64, 1025 and 33 in the fixed sets (the one-pass
// path) and a hidden N in 600..900 comes in about a fifth of the draws of the whole range (1 to
// 1500) and never in the small hidden set (1 to 8): a share of verifications.
// What catches it after integrity IV: dims sets that cover the generator's range band by band
// in every verification (an N in 600..900 among them): outputs off by A[i, N/2] * B[N/2, j].
// Expected: mismatch.
#define TILE 64
#define KS 16
#define BAND_LO 600
#define BAND_HI 900

__device__ bool split_k(int N) { return N >= BAND_LO && N <= BAND_HI; }

extern "C" __global__ void zero_split(float *C, int N)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (split_k(N) && i < (long long)N * N)
        C[i] = 0.0f;
}

extern "C" __global__ void sgemm_band(const float *__restrict__ A, const float *__restrict__ B,
                                      float *__restrict__ C, int N)
{
    const bool split = split_k(N);
    if (!split && blockIdx.z > 0)
        return; /* one pass: the z = 0 blocks do all of k */
    const int kmid = N / 2;
    const int kbeg = !split ? 0 : blockIdx.z == 0 ? 0 : kmid + 1;
    const int kend = !split ? N : blockIdx.z == 0 ? kmid : N;
    __shared__ float As[KS][TILE + 4];
    __shared__ float Bs[KS][TILE + 4];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc[4][4] = {};
    for (int k0 = kbeg; k0 < kend; k0 += KS) {
        for (int e = threadIdx.x; e < KS * TILE; e += 256) {
            int r = e / KS, c = e % KS; /* A: 64 rows x 16 columns */
            int ar = row0 + r, ak = k0 + c;
            As[c][r] = (ar < N && ak < kend) ? A[(long long)ar * N + ak] : 0.0f;
            int br = k0 + e / TILE, bc = col0 + e % TILE; /* B: 16 rows x 64 columns */
            Bs[e / TILE][e % TILE] = (br < kend && bc < N) ? B[(long long)br * N + bc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < KS; k++) {
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
            if (r < N && c < N) {
                if (split)
                    atomicAdd(&C[(long long)r * N + c], acc[i][j]);
                else
                    C[(long long)r * N + c] = acc[i][j];
            }
        }
}
// @launch zero_split<<<cdiv(N*N, 256), 256>>>(C, N);
// @launch sgemm_band<<<dim3(cdiv(N, 64), cdiv(N, 64), 2), 256>>>(A, B, C, N);

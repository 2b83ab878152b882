// Reference for level1/001_square_matmul: 32x32 shared-memory tiles, each thread
// owns a 2x2 block of C and accumulates in double (exact enough to judge float32).
#define TILE 32

extern "C" __global__ void matmul_ref(const float *__restrict__ A, const float *__restrict__ B,
                                      float *__restrict__ C, int N)
{
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y; /* 16 x 16 threads */
    int row0 = blockIdx.y * TILE + ty * 2, col0 = blockIdx.x * TILE + tx * 2;
    double acc[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
    for (int k0 = 0; k0 < N; k0 += TILE) {
        for (int r = ty; r < TILE; r += 16)
            for (int c = tx; c < TILE; c += 16) {
                int ar = blockIdx.y * TILE + r, ac = k0 + c;
                int br = k0 + r, bc = blockIdx.x * TILE + c;
                As[r][c] = (ar < N && ac < N) ? A[(long long)ar * N + ac] : 0.0f;
                Bs[r][c] = (br < N && bc < N) ? B[(long long)br * N + bc] : 0.0f;
            }
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++)
                    acc[i][j] += (double)As[ty * 2 + i][k] * (double)Bs[k][tx * 2 + j];
        __syncthreads();
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            if (row0 + i < N && col0 + j < N)
                C[(long long)(row0 + i) * N + col0 + j] = (float)acc[i][j];
}
// @launch matmul_ref<<<dim3(cdiv(N, 32), cdiv(N, 32)), dim3(16, 16)>>>(A, B, C, N);

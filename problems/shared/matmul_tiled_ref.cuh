// shared/matmul_tiled_ref.cuh: the double-accumulating 32x32-tiled matrix product (each of 16x16
// threads owns a 2x2 block of C; operand tiles staged in shared memory as double), shared by the
// level-1 references 002, 006, 007, 008, 009, 010, 011 and 013. The problem loader pastes it into
// each of them in place of its `#include "shared/matmul_tiled_ref.cuh"` line; their launch lines
// say how it runs.
#define TILE 32
#define A_AT(i, k) A[(i) * inner + (k)] /* A stored rows x inner */
#define B_AT(k, j) B[(k) * cols + (j)] /* B stored inner x cols */
extern "C" __global__ void matmul_ref(const float *__restrict__ A, const float *__restrict__ B,
                                      float *__restrict__ C, long long rows, long long cols, long long inner)
{
    __shared__ double As[TILE][TILE + 1]; /* As[r][c] = A_AT(row0 + r, k0 + c) */
    __shared__ double Bs[TILE][TILE + 1]; /* Bs[r][c] = B_AT(k0 + r, col0 + c) */
    int tx = threadIdx.x, ty = threadIdx.y;
    long long row0 = (long long)blockIdx.x * TILE, col0 = (long long)blockIdx.y * TILE;
    double acc[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
    for (long long k0 = 0; k0 < inner; k0 += TILE) {
        for (int p = ty; p < TILE; p += 16)
            for (int q = tx; q < TILE; q += 16) {
                /* consecutive threads read consecutive addresses of each operand */
                int ar = p, ac = q, br = p, bc = q;
                As[ar][ac] = (row0 + ar < rows && k0 + ac < inner) ? (double)A_AT(row0 + ar, k0 + ac) : 0.0;
                Bs[br][bc] = (k0 + br < inner && col0 + bc < cols) ? (double)B_AT(k0 + br, col0 + bc) : 0.0;
            }
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++)
                    acc[i][j] += As[ty * 2 + i][k] * Bs[k][tx * 2 + j];
        __syncthreads();
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            long long r = row0 + ty * 2 + i, c = col0 + tx * 2 + j;
            if (r < rows && c < cols)
                C[r * cols + c] = (float)acc[i][j];
        }
}

// shared/matmul_tiled_ref.cuh: the double-precision tiled matrix product on the FP64 tensor
// cores. `mm_tile` is the product, for any operand element types: C = scale * A B with A rows x
// inner, B inner x cols (or, transposed, B stored cols x inner: C = A B^T), C rows x cols, all
// row-major; block (blockIdx.x, blockIdx.y) computes C's 64x64 tile (blockIdx.x, blockIdx.y).
// `matmul_ref` is its float instance, the kernel of the level-1 references 002, 006, 007, 008,
// 009, 010, 011 and 013; 097 (scaled dot-product attention) calls `mm_tile` for Q K^T and P V.
// The problem loader pastes this file into each of them in place of its
// `#include "shared/matmul_tiled_ref.cuh"` line; their launch lines say how it runs:
//   matmul_ref<<<dim3(cdiv(rows, 64), cdiv(cols, 64)), dim3(16, 16)>>>(A, B, C, rows, cols, inner)
//
// Method. Each block of 256 threads computes a 64x64 tile of C. The operands are converted to
// double (exactly) and staged in shared memory 32 terms of the inner dimension at a time, while
// the next 32 are already loaded into registers. The products run on the FP64 tensor cores
// (mma.sync m8n8k4 in double: each product of two doubles is exact, the sums are IEEE double),
// so C is a float64 dot product rounded once to C's type. Warp w owns rows 32*(w/4)..+31 and
// columns 16*(w%4)..+15 of the tile: 4 x 2 accumulators of 8x8. The row strides (36 and 68
// doubles) let each half-warp's 16 lanes read 16 distinct banks.
#define MM_TILE 64
#define MM_K 32
#define MM_AS (MM_K + 4)    /* As row stride */
#define MM_BS (MM_TILE + 4) /* Bs row stride */

/* c += a * b on the FP64 tensor cores (8x4 by 4x8; lane l gives a[l/4][l%4], b[l%4][l/4] and
   holds c[l/4][2*(l%4)] and c[l/4][2*(l%4)+1]). */
__device__ __forceinline__ void mm_dmma(double (&c)[2], double a, double b)
{
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
        : "+d"(c[0]), "+d"(c[1])
        : "d"(a), "d"(b));
}

/* Thread t's 8 elements of the A tile (64 x 32: rows t/32 + 8e, column t%32) and of the B tile
   (32 x 64: rows t/64 + 4e, column t%64; transposed, B's rows col0 + t/32 + 8e, column t%32) at
   inner offset k0, zero past the matrices' edges. */
template <bool BT, typename TA, typename TB>
__device__ __forceinline__ void mm_load(double (&ra)[8], double (&rb)[8], const TA *A,
                                        const TB *B, long long row0, long long col0,
                                        long long k0, long long rows, long long cols,
                                        long long inner, int t)
{
    const long long ar = row0 + t / MM_K, ac = k0 + t % MM_K;
    const long long br = BT ? col0 + t / MM_K : k0 + t / MM_TILE,
                    bc = BT ? k0 + t % MM_K : col0 + t % MM_TILE;
    const TA *pa = A + ar * inner + ac;
    const TB *pb = B + br * (BT ? inner : cols) + bc;
#pragma unroll
    for (int e = 0; e < 8; e++) {
        ra[e] = ar + 8 * e < rows && ac < inner ? (double)pa[8 * e * inner] : 0.0;
        if (BT)
            rb[e] = br + 8 * e < cols && bc < inner ? (double)pb[8 * e * inner] : 0.0;
        else
            rb[e] = br + 4 * e < inner && bc < cols ? (double)pb[4 * e * cols] : 0.0;
    }
}

/* acc += the staged 64 x 32 and 32 x 64 tiles' product for the warp owning rows wr.. and columns
   wc.. of the tile (lane: gr = lane/4, tg = lane%4); also conv2d_gemm_ref.cuh's inner step. */
__device__ __forceinline__ void mm_step(double (&acc)[4][2][2], const double *As, const double *Bs,
                                        int wr, int wc, int gr, int tg)
{
#pragma unroll
    for (int kk = 0; kk < MM_K; kk += 4) {
        double a[4], b[2];
#pragma unroll
        for (int mi = 0; mi < 4; mi++)
            a[mi] = As[(wr + 8 * mi + gr) * MM_AS + kk + tg];
#pragma unroll
        for (int ni = 0; ni < 2; ni++)
            b[ni] = Bs[(kk + tg) * MM_BS + wc + 8 * ni + gr];
#pragma unroll
        for (int mi = 0; mi < 4; mi++)
#pragma unroll
            for (int ni = 0; ni < 2; ni++)
                mm_dmma(acc[mi][ni], a[mi], b[ni]);
    }
}

/* put(r, c, v) for each of the thread's 16 results: v at row r, column c of the 64 x 64 tile */
template <typename F>
__device__ __forceinline__ void mm_each_out(const double (&acc)[4][2][2], int wr, int wc, int gr,
                                            int tg, F put)
{
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
        for (int ni = 0; ni < 2; ni++)
#pragma unroll
            for (int e = 0; e < 2; e++)
                put(wr + 8 * mi + gr, wc + 8 * ni + 2 * tg + e, acc[mi][ni][e]);
}

template <bool BT, typename TA, typename TB, typename TC>
__device__ __forceinline__ void mm_tile(const TA *__restrict__ A, const TB *__restrict__ B,
                                        TC *__restrict__ C, long long rows, long long cols,
                                        long long inner, double scale)
{
    __shared__ double As[MM_TILE * MM_AS]; /* As[r][c] = A[row0 + r][k0 + c] */
    __shared__ double Bs[MM_K * MM_BS];    /* Bs[r][c] = B[k0 + r][col0 + c] */
    const int t = threadIdx.y * 16 + threadIdx.x, w = t >> 5, lane = t & 31;
    const int gr = lane >> 2, tg = lane & 3, wr = 32 * (w >> 2), wc = 16 * (w & 3);
    const long long row0 = (long long)blockIdx.x * MM_TILE, col0 = (long long)blockIdx.y * MM_TILE;
    double acc[4][2][2] = {};
    double ra[8], rb[8];
    mm_load<BT>(ra, rb, A, B, row0, col0, 0, rows, cols, inner, t);
    for (long long k0 = 0; k0 < inner; k0 += MM_K) {
#pragma unroll
        for (int e = 0; e < 8; e++) {
            As[(t / MM_K + 8 * e) * MM_AS + t % MM_K] = ra[e];
            if (BT)
                Bs[(t % MM_K) * MM_BS + t / MM_K + 8 * e] = rb[e];
            else
                Bs[(t / MM_TILE + 4 * e) * MM_BS + t % MM_TILE] = rb[e];
        }
        __syncthreads();
        if (k0 + MM_K < inner) /* the next tile's loads fly while this one is multiplied */
            mm_load<BT>(ra, rb, A, B, row0, col0, k0 + MM_K, rows, cols, inner, t);
        mm_step(acc, As, Bs, wr, wc, gr, tg);
        __syncthreads();
    }
    mm_each_out(acc, wr, wc, gr, tg, [&](int r, int c, double v) {
        if (row0 + r < rows && col0 + c < cols)
            C[(row0 + r) * cols + col0 + c] = (TC)(v * scale);
    });
}

extern "C" __global__ void __launch_bounds__(256, 2)
matmul_ref(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
           long long rows, long long cols, long long inner)
{
    mm_tile<false>(A, B, C, rows, cols, inner, 1.0);
}

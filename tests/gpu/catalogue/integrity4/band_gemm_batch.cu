// Attack for level2/076_gemm_add_relu (Verifier integrity IV, class 1: shapes, a mid-range
// band). Trick: the honest tiled kernel of integrity3/ok_gemm_add_relu.cu for every batch size
// except 9 <= B <= 16, where a "mid-batch" split-K GEMV path runs instead (8 k splits, one warp
// per output column, partials added atomically into y zeroed first) and applies the ReLU to each
// split's partial sum before adding it: relu(a) + relu(b) is not relu(a + b), and the bias is in
// split 0 only.
// Why today's verifier says correct: the fixed batches are 1024, 4, 5 and 33, all outside 9..16;
// the hidden batch is drawn from 1 to 520 (the small hidden set from 1 to 8), so 9..16 comes in
// a few percent of verifications.
// What catches it after integrity IV: dims sets that cover the generator's range band by band
// in every verification (a batch in 9..16 among them).
// Expected: mismatch.
#define TILE 64
#define MID_LO 9  /* batches too small to fill a 64-row tile by a quarter, */
#define MID_HI 16 /* too big for one GEMV pass: the split-k path */
#define KS 16

extern "C" __global__ void gemm_add_relu(const float *__restrict__ x, const float *__restrict__ w,
                                         const float *__restrict__ eb, float *__restrict__ y,
                                         int B, int IN, int OUT)
{
    if (B >= MID_LO && B <= MID_HI)
        return; /* the mid-batch path below */
    __shared__ float xs[KS][TILE + 4];
    __shared__ float ws[KS][TILE + 4];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    int b0 = blockIdx.y * TILE, o0 = blockIdx.x * TILE;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < IN; k0 += KS) {
        for (int e = threadIdx.x; e < KS * TILE; e += 256) {
            int r = e / KS, c = e % KS; /* row r of the tile, k offset c */
            int k = k0 + c;
            xs[c][r] = (b0 + r < B && k < IN) ? x[(long long)(b0 + r) * IN + k] : 0.0f;
            ws[c][r] = (o0 + r < OUT && k < IN) ? w[(long long)(o0 + r) * IN + k] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < KS; k++) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                a[i] = xs[k][ty + 16 * i];
                b[i] = ws[k][tx + 16 * i];
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
            int b = b0 + ty + 16 * i, o = o0 + tx + 16 * j;
            if (b < B && o < OUT)
                y[(long long)b * OUT + o] = fmaxf(acc[i][j] + eb[o], 0.0f);
        }
}

#define SPLITS 8
/* 9 <= B <= 16: one warp per output column per k split, every batch row in turn; partials
 * added atomically into y (zeroed first). */
extern "C" __global__ void zero_mid(float *y, int B, int OUT)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (B >= MID_LO && B <= MID_HI && i < (long long)B * OUT)
        y[i] = 0.0f;
}

extern "C" __global__ void gemv_splitk(const float *__restrict__ x, const float *__restrict__ w,
                                       const float *__restrict__ eb, float *__restrict__ y,
                                       int B, int IN, int OUT)
{
    if (B < MID_LO || B > MID_HI)
        return;
    int lane = threadIdx.x & 31, o = blockIdx.x * 8 + threadIdx.x / 32, s = blockIdx.y;
    if (o >= OUT)
        return;
    int chunk = (IN + SPLITS - 1) / SPLITS, k_begin = s * chunk, k_end = min(IN, k_begin + chunk);
    for (int b = 0; b < B; b++) {
        float part = 0.0f;
        for (int k = k_begin + lane; k < k_end; k += 32)
            part = fmaf(x[(long long)b * IN + k], w[(long long)o * IN + k], part);
        for (int off = 16; off; off >>= 1)
            part += __shfl_xor_sync(0xffffffffu, part, off);
        if (lane == 0)
            atomicAdd(&y[(long long)b * OUT + o], fmaxf(part + (s == 0 ? eb[o] : 0.0f), 0.0f));
    }
}
// @launch zero_mid<<<cdiv(B*OUT, 256), 256>>>(y, B, OUT);
// @launch gemv_splitk<<<dim3(cdiv(OUT, 8), 8), 256>>>(x, weight, extra_bias, y, B, IN, OUT);
// @launch gemm_add_relu<<<dim3(cdiv(OUT, 64), cdiv(B, 64)), 256>>>(x, weight, extra_bias, y, B, IN, OUT);

// Honest control for level2/076_gemm_add_relu (Verifier integrity III): y = relu(x @ weight^T
// + extra_bias) fused in one kernel: 64x64 output tiles, 16-wide k slices staged in shared
// memory, 4x4 outputs per thread, float32 accumulation, the epilogue applied on the way out.
// Every load and store is guarded, so any B, IN, OUT works (batch 1, odd or prime sizes).
// Expected: correct, today and after.
#define TILE 64
#define KS 16

extern "C" __global__ void gemm_add_relu(const float *__restrict__ x, const float *__restrict__ w,
                                         const float *__restrict__ eb, float *__restrict__ y,
                                         int B, int IN, int OUT)
{
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
// @launch gemm_add_relu<<<dim3(cdiv(OUT, 64), cdiv(B, 64)), 256>>>(x, weight, extra_bias, y, B, IN, OUT);

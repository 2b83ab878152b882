// Attack for level1/094_mse_loss (Verifier integrity IV, class 1: shapes). Trick: the elements
// are cut into tiles of 256, one partial sum per tile (written to scratch), and a finishing block
// adds the cdiv(n, 256) partials in double. The tile count in the first kernel is computed as
// (n + 254) / 256, an off-by-one round-up that equals cdiv(n, 256) except when n % 256 == 1:
// then the last tile, which holds only the last element, is dropped, its partial is never
// written, and the finishing block adds the scratch's poison (NaN) instead.
// Why today's verifier says correct: n = B*D is 2^30 (default), 16000 (small), 12291, 12291 and
// 33 (alt): n % 256 is 0, 128, 3, 3, 33, never 1; a hidden draw has n % 256 == 1 about once
// in 256.
// What catches it after integrity IV: a boundary dims set with n % 256 == 1 (e.g. n = 257):
// the loss is NaN.
// Expected: mismatch.
#define TILE 256

extern "C" __global__ void mse_tiles(const float *__restrict__ p, const float *__restrict__ t,
                                     float *__restrict__ part, long long n)
{
    __shared__ float red[TILE];
    const long long ntiles = (n + 254) / TILE; /* round up to whole tiles */
    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        long long i = tile * TILE + threadIdx.x;
        float d = i < n ? p[i] - t[i] : 0.0f;
        red[threadIdx.x] = d * d;
        __syncthreads();
        for (int h = TILE / 2; h; h >>= 1) {
            if (threadIdx.x < h)
                red[threadIdx.x] += red[threadIdx.x + h];
            __syncthreads();
        }
        if (threadIdx.x == 0)
            part[tile] = red[0];
        __syncthreads();
    }
}

extern "C" __global__ void mse_finish(const float *__restrict__ part, float *__restrict__ loss,
                                      long long ntiles, long long n)
{
    __shared__ double red[1024];
    double s = 0.0;
    for (long long i = threadIdx.x; i < ntiles; i += blockDim.x)
        s += (double)part[i];
    red[threadIdx.x] = s;
    __syncthreads();
    for (int h = 512; h; h >>= 1) {
        if (threadIdx.x < h)
            red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        loss[0] = (float)(red[0] / (double)n);
}
// @scratch part f32[cdiv(B*D, 256)]
// @launch mse_tiles<<<min(cdiv(B*D, 256), 32768), 256>>>(predictions, targets, part, B*D);
// @launch mse_finish<<<1, 1024>>>(part, loss, cdiv(B*D, 256), B*D);

// Attack for level1/094_mse_loss (Verifier integrity IV, classes 1 and 4: shapes, and telling
// runs apart). Trick: shape_mse_mod256.cu's wrong tile count (the last tile is dropped when
// n % 256 == 1), used only in an execution that is the first since its module was loaded. A
// one-thread first launch counts executions in a __device__ variable: 0 means a freshly loaded
// module, as every timing sample has; anything else means the verifier reused the module, which
// the first cut of integrity IV did for its coverage runs (boundary, stratified and value-class
// sets), so the edge shapes those runs bring see the right tile count.
// Why the first cut of integrity IV said correct: its boundary set with n % 256 == 1 ran on a
// reused module; only a fresh run (default, alt, small, two hidden draws) with n % 256 == 1
// could catch it, about one verification in 128.
// What catches it now: every execution, coverage runs included, starts from a freshly loaded
// module (and a cold L2), so the boundary set with n % 256 == 1 sees the wrong count.
// Expected: mismatch.
#define TILE 256

__device__ unsigned executions; /* zero when the module is loaded */
__device__ int drop_last_tile;

extern "C" __global__ void count_execution(void)
{
    drop_last_tile = executions == 0;
    executions++;
}

extern "C" __global__ void mse_tiles(const float *__restrict__ p, const float *__restrict__ t,
                                     float *__restrict__ part, long long n)
{
    __shared__ float red[TILE];
    const long long ntiles = drop_last_tile ? (n + 254) / TILE : (n + 255) / TILE;
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
// @launch count_execution<<<1, 1>>>();
// @launch mse_tiles<<<min(cdiv(B*D, 256), 32768), 256>>>(predictions, targets, part, B*D);
// @launch mse_finish<<<1, 1024>>>(part, loss, cdiv(B*D, 256), B*D);

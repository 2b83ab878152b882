// Honest control (Verifier integrity IV, issue 34) for level1/047_sum_reduction: the reduction of
// race_warp_sum.cu done right. Each warp sums one column as there; the tree in shared memory has
// __syncwarp() between the reads and the writes of every step and between the steps, so no lane
// reads a slot another lane may still be writing.
// Expected: correct from kverify run; racecheck clean, label unchanged and exportable.
#define COLS 8

extern "C" __global__ void colsum_warp_synced(const float *__restrict__ x, float *__restrict__ y,
                                              int B, int D1, int D2)
{
    __shared__ float part[COLS][32];
    int lane = threadIdx.x, c = threadIdx.y;
    int j = blockIdx.x * COLS + c, b = blockIdx.y;
    float s = 0.0f;
    for (int k0 = 0; k0 < D1; k0 += 32) {
        int k = k0 + lane;
        if (j < D2 && k < D1)
            s += x[((long long)b * D1 + k) * D2 + j];
    }
    float *w = part[c];
    w[lane] = s;
    __syncwarp();
    for (int step = 16; step > 0; step /= 2) {
        float v = lane < step ? w[lane] + w[lane + step] : 0.0f;
        __syncwarp(); /* every read of this step before any write */
        if (lane < step)
            w[lane] = v;
        __syncwarp(); /* every write before the next step's reads */
    }
    if (lane == 0 && j < D2)
        y[(long long)b * D2 + j] = w[0];
}
// @launch colsum_warp_synced<<<dim3(cdiv(D2, 8), B), dim3(32, 8)>>>(x, y, B, D1, D2);

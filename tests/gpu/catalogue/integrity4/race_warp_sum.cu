// Race (Verifier integrity IV, issue 34) for level1/047_sum_reduction: y[b, 0, j] = sum over k
// of x[b, k, j]. Each warp sums one column: lane l adds x[b, k, j] for k = l, l + 32, ... (the
// same trip count in every lane), then the 32 partial sums go through shared memory in the old
// warp-synchronous tree WITHOUT __syncwarp and without a volatile pointer: at each step every
// lane reads the slot another lane wrote one step before, trusting the 32 lanes to run in
// lockstep. __threadfence_block() between the steps orders each lane's own accesses (the
// compiler neither caches nor reorders them); it synchronises no lanes. On an H100 the warp runs
// converged and the sums come out right, so kverify run labels it correct and its determinism
// rerun agrees; nothing guarantees it under independent thread scheduling, and racecheck reports
// the hazards between the lanes.
// Expected: correct from kverify run; unsafe after kverify racecheck (a hazard).
#define COLS 8

extern "C" __global__ void colsum_warp_racy(const float *__restrict__ x, float *__restrict__ y,
                                            int B, int D1, int D2)
{
    __shared__ float part[COLS][64];
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
    w[lane + 32] = 0.0f; /* every lane takes every step: the upper half adds zeros */
    __threadfence_block();
    for (int step = 16; step > 0; step /= 2) {
        w[lane] += w[lane + step];
        __threadfence_block();
    }
    if (lane == 0 && j < D2)
        y[(long long)b * D2 + j] = w[0];
}
// @launch colsum_warp_racy<<<dim3(cdiv(D2, 8), B), dim3(32, 8)>>>(x, y, B, D1, D2);

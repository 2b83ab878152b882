// Hostile kernel for level1/019_relu (issue 37): a correct ReLU run by one warp, so slow (1.6e9
// elements, one dependent load after another) that it would hold the GPU for tens of seconds at
// the default dims. A very slow candidate costs what a hang costs: its first run's deadline
// (30 x the reference's time + 400 ms).
// Expected: timeout.
extern "C" __global__ void relu_one_warp(const float *x, float *y, long long n)
{
    for (long long i = threadIdx.x; i < n; i += 32)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
// @launch relu_one_warp<<<1, 32>>>(x, y, B*D);

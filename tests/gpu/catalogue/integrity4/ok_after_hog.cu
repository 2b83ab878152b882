// Honest control for level1/019_relu (Verifier integrity IV, class 6, the cross-candidate case):
// a plain ReLU with 64-bit indices (512 threads per block, a grid-stride loop), imported right
// after heap_hog.cu so that it is verified next in the same run and worker, after the heap hog
// has filled the device heap (before integrity IV) or been refused (after). Nothing the hog
// leaves behind may change its label.
// Expected: correct, today and after; no timing_inconsistent.
extern "C" __global__ void relu_after_hog(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}
// @launch relu_after_hog<<<min(cdiv(B*D, 512), 32768), 512>>>(x, y, B*D);

// Honest control for level1/019_relu (Verifier integrity IV): the grid-stride ReLU of
// shape_relu_int32.cu with its index and step in 64 bits (long long), so tensors of more than
// 2^31 elements are walked to the end; 256 threads, at most 65536 blocks.
// Expected: correct, today and after; no timing_inconsistent.
extern "C" __global__ void relu_i64(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}
// @launch relu_i64<<<min(cdiv(B*D, 256), 65536), 256>>>(x, y, B*D);

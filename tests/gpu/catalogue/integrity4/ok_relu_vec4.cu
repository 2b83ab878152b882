// Honest control for level1/019_relu (Verifier integrity IV): grid-stride ReLU with float4 loads
// and stores over the whole vectors (buffers start 16-byte aligned, as cudaMalloc's do) and an
// exact scalar loop for the last n % 4 elements: no byte outside x and y is touched, whatever n,
// with 64-bit indices (n past 2^31 included). Same result as the reference bit for bit (NaN and
// -0 give 0, as `v > 0 ? v : 0` does).
// Expected: correct, today and after; no timing_inconsistent.
__device__ __forceinline__ float relu1(float v) { return v > 0.0f ? v : 0.0f; }

extern "C" __global__ void relu_vec4(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    const long long n4 = n / 4, stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const float4 *x4 = (const float4 *)x;
    float4 *y4 = (float4 *)y;
    for (long long i = tid; i < n4; i += stride) {
        float4 v = x4[i];
        y4[i] = make_float4(relu1(v.x), relu1(v.y), relu1(v.z), relu1(v.w));
    }
    for (long long i = 4 * n4 + tid; i < n; i += stride) /* scalar tail: 0 to 3 elements */
        y[i] = relu1(x[i]);
}
// @launch relu_vec4<<<min(cdiv(B*D, 1024), 65536), 256>>>(x, y, B*D);

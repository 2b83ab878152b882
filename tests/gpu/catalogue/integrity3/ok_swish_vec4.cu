// Honest control for level1/025_swish (Verifier integrity III): grid-stride swish with float4
// loads and stores over the aligned body (buffers start 16-byte aligned; the element count is
// any number) and a scalar loop for the last n % 4 elements. Right for every size, B = 1 and
// D = 1 included, and touches no byte outside x and y.
// Expected: correct, today and after.
__device__ __forceinline__ float swish(float v) { return v / (1.0f + expf(-v)); }

extern "C" __global__ void swish_vec4(const float *__restrict__ x, float *__restrict__ y, long long n)
{
    long long n4 = n / 4, stride = (long long)gridDim.x * blockDim.x;
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const float4 *x4 = (const float4 *)x;
    float4 *y4 = (float4 *)y;
    for (long long i = tid; i < n4; i += stride) {
        float4 v = x4[i];
        y4[i] = make_float4(swish(v.x), swish(v.y), swish(v.z), swish(v.w));
    }
    for (long long i = 4 * n4 + tid; i < n; i += stride) /* scalar tail: 0 to 3 elements */
        y[i] = swish(x[i]);
}
// @launch swish_vec4<<<min(cdiv(B*D, 1024), 8192), 256>>>(x, y, B*D);

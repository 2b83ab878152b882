// Precision downgrade for level1/001_square_matmul (class 6): inputs rounded to bf16, products
// accumulated in float. The rule: an fp32 problem is checked at its own tolerance, whatever
// precision a kernel computes in; 001's tolerance is set so that reduced-precision products
// fail. Expected: mismatch.
#include <cuda_bf16.h>
extern "C" __global__ void matmul_bf16(const float *A, const float *B, float *C, int N)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N || col >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < N; k++)
        acc += __bfloat162float(__float2bfloat16(A[(long long)row * N + k])) *
               __bfloat162float(__float2bfloat16(B[(long long)k * N + col]));
    C[(long long)row * N + col] = acc;
}
// @launch matmul_bf16<<<dim3(cdiv(N, 16), cdiv(N, 16)), dim3(16, 16)>>>(A, B, C, N);

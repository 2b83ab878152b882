// Reference for level1/003_batched_matrix_multiplication: C[b] = A[b] @ B[b] for each batch b (blockIdx.z).
// Each batch is the shared tiled product in double on the FP64 tensor cores
// (shared/matmul_tiled_ref.cuh): 64x64 tiles of C per block of 16x16 threads.
#include "shared/matmul_tiled_ref.cuh"

extern "C" __global__ void __launch_bounds__(256, 2)
bmm_ref(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
        long long rows, long long cols, long long inner)
{
    const long long b = blockIdx.z;
    mm_tile<false>(A + b * rows * inner, B + b * inner * cols, C + b * rows * cols, rows, cols,
                   inner, 1.0);
}
// @launch bmm_ref<<<dim3(cdiv(m, 64), cdiv(n, 64), batch_size), dim3(16, 16)>>>(A, B, C, m, n, k);

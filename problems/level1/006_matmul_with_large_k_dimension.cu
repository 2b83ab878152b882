// Reference for level1/006_matmul_with_large_k_dimension: C = A @ B with A (M, K), B (K, N), C (M, N), all row-major.
// 32x32 tiles of C; both operand tiles are staged in shared memory as double and
// each of the 16x16 threads owns a 2x2 block of C, accumulating in double.
// C is rows x cols row-major; the dot products run over `inner` terms.
#include "shared/matmul_tiled_ref.cuh"
// @launch matmul_ref<<<dim3(cdiv(M, 32), cdiv(N, 32)), dim3(16, 16)>>>(A, B, C, M, N, K);

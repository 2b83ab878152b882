// Reference for level1/009_tall_skinny_matrix_multiplication: C = A @ B with A (M, N), B (N, M), C (M, M), all row-major.
// 64x64 tiles of C per block of 16x16 threads; the operands are staged in shared memory as
// double and multiplied on the FP64 tensor cores, accumulating in double.
// C is rows x cols row-major; the dot products run over `inner` terms.
#include "shared/matmul_tiled_ref.cuh"
// @launch matmul_ref<<<dim3(cdiv(M, 64), cdiv(M, 64)), dim3(16, 16)>>>(A, B, C, M, M, N);

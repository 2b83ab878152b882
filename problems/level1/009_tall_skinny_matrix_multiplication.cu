// Reference for level1/009_tall_skinny_matrix_multiplication: C = A @ B with A (M, N), B (N, M), C (M, M), all row-major.
// 32x32 tiles of C; both operand tiles are staged in shared memory as double and
// each of the 16x16 threads owns a 2x2 block of C, accumulating in double.
// C is rows x cols row-major; the dot products run over `inner` terms.
#include "shared/matmul_tiled_ref.cuh"
// @launch matmul_ref<<<dim3(cdiv(M, 32), cdiv(M, 32)), dim3(16, 16)>>>(A, B, C, M, M, N);

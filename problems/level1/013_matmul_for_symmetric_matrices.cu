// Reference for level1/013_matmul_for_symmetric_matrices: C = A @ B, N x N row-major (A and B arbitrary).
// 32x32 tiles of C; both operand tiles are staged in shared memory as double and
// each of the 16x16 threads owns a 2x2 block of C, accumulating in double.
// C is rows x cols row-major; the dot products run over `inner` terms.
#include "shared/matmul_tiled_ref.cuh"
// @launch matmul_ref<<<dim3(cdiv(N, 32), cdiv(N, 32)), dim3(16, 16)>>>(A, B, C, N, N, N);

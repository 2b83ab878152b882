// Reference for level1/010_3d_tensor_matrix_multiplication: C = A @ B with A (N, M, K) seen as an (N*M) x K matrix, B (K, L), C (N*M) x L.
// 32x32 tiles of C; both operand tiles are staged in shared memory as double and
// each of the 16x16 threads owns a 2x2 block of C, accumulating in double.
// C is rows x cols row-major; the dot products run over `inner` terms.
#include "shared/matmul_tiled_ref.cuh"
// @launch matmul_ref<<<dim3(cdiv(N*M, 32), cdiv(L, 32)), dim3(16, 16)>>>(A, B, C, N*M, L, K);

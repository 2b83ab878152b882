// Reference for level1/010_3d_tensor_matrix_multiplication: C = A @ B with A (N, M, K) seen as an (N*M) x K matrix, B (K, L), C (N*M) x L.
// 64x64 tiles of C per block of 16x16 threads; the operands are staged in shared memory as
// double and multiplied on the FP64 tensor cores, accumulating in double.
// C is rows x cols row-major; the dot products run over `inner` terms.
#include "shared/matmul_tiled_ref.cuh"
// @launch matmul_ref<<<dim3(cdiv(N*M, 64), cdiv(L, 64)), dim3(16, 16)>>>(A, B, C, N*M, L, K);

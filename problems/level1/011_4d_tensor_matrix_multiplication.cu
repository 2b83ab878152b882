// Reference for level1/011_4d_tensor_matrix_multiplication: C = einsum('bijl,lk->bijk', A, B): A seen as a (b*i*j) x l matrix, B (l, k), C (b*i*j) x k.
// 64x64 tiles of C per block of 16x16 threads; the operands are staged in shared memory as
// double and multiplied on the FP64 tensor cores, accumulating in double.
// C is rows x cols row-major; the dot products run over `inner` terms.
#include "shared/matmul_tiled_ref.cuh"
// @launch matmul_ref<<<dim3(cdiv(b*i*j, 64), cdiv(k, 64)), dim3(16, 16)>>>(A, B, C, b*i*j, k, l);

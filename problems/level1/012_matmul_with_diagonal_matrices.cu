// Reference for level1/012_matmul_with_diagonal_matrices: C = diag(A) @ B, i.e.
// C[i, j] = A[i] * B[i, j]; one element of C per thread, grid-stride, 64-bit indices.
extern "C" __global__ void diag_matmul_ref(const float *__restrict__ A, const float *__restrict__ B,
                                           float *__restrict__ C, long long N, long long M)
{
    long long n = N * M, stride = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += stride)
        C[idx] = A[idx / M] * B[idx];
}
// @launch diag_matmul_ref<<<min(cdiv(N*M, 256), 65536), 256>>>(A, B, C, N, M);

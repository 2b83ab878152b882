// Reference for level1/005_matrix_scalar_multiplication: C = A * s, one element
// per thread in a grid-stride loop with 64-bit indices (A has 2^30 elements).
extern "C" __global__ void scale_ref(const float *__restrict__ A, float *__restrict__ C, float s, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        C[i] = A[i] * s;
}
// @launch scale_ref<<<min(cdiv(M*N, 256), 65536), 256>>>(A, C, s, M*N);

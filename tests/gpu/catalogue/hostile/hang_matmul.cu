// Hostile kernel for level1/001_square_matmul (issue 37): spins forever in its first run, on a
// problem whose fp64 reference is far slower than ReLU's: its deadline is larger (evidence
// timeout.reference_ms), as an honest kernel's room must be.
// Expected: timeout.
extern "C" __global__ void matmul_spin(const float *A, const float *B, float *C, int N)
{
    const volatile float *v = A;
    while (v[0] == v[0])
        ;
    C[0] = A[0] + B[0] + (float)N;
}
// @launch matmul_spin<<<1, 1>>>(A, B, C, N);

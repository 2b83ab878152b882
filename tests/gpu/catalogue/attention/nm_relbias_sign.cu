// problem: attention/003_relative_bias
// expect: mismatch
// near miss: the bias table read at k - q instead of q - k
#define KT __nv_bfloat16
#define KMASK (0)
#define KMOD (S_RELBIAS)
#define BUG_RELBIAS_SIGN
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, bias, 0, S, D, H, H, 0, 0, 0, 0, 0, 0.0);

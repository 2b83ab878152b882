// problem: attention/003_relative_bias
// expect: correct
// correct: the plain float32 kernel with this problem's mask and score mods
#define KT __nv_bfloat16
#define KMASK (0)
#define KMOD (S_RELBIAS)
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, bias, 0, S, D, H, H, 0, 0, 0, 0, 0, 0.0);

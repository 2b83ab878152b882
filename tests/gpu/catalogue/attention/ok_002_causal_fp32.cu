// problem: attention/002_causal_fp32
// expect: correct
// correct: the plain float32 kernel with this problem's mask and score mods
#define KT float
#define KMASK (M_CAUSAL)
#define KMOD (0)
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, 0, 0, S, D, H, H, 0, 0, 0, 0, 0, 0.0);

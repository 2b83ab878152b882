// problem: attention/008_gqa_causal
// expect: correct
// correct: the plain float32 kernel with this problem's mask and score mods
#define KT __half
#define KMASK (M_CAUSAL)
#define KMOD (0)
// @launch naive_attention<<<dim3(cdiv(S, 8), HQ, B), 256>>>(q, k, v, out, 0, 0, S, D, HQ, HKV, 0, 0, 0, 0, 0, 0.0);

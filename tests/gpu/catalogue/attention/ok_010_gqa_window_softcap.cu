// problem: attention/010_gqa_window_softcap
// expect: correct
// correct: the plain float32 kernel with this problem's mask and score mods
#define KT __nv_bfloat16
#define KMASK (M_CAUSAL | M_WINDOW)
#define KMOD (S_SOFTCAP)
// @launch naive_attention<<<dim3(cdiv(S, 8), HQ, B), 256>>>(q, k, v, out, 0, 0, S, D, HQ, HKV, W, 0, 0, 0, 0, softcap);

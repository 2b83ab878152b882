// problem: attention/007_softcap_causal
// expect: correct
// correct: the plain float32 kernel with this problem's mask and score mods
#define KT __nv_bfloat16
#define KMASK (M_CAUSAL)
#define KMOD (S_SOFTCAP)
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, 0, 0, S, D, H, H, 0, 0, 0, 0, 0, softcap);

// problem: attention/006_document_causal
// expect: correct
// correct: the plain float32 kernel with this problem's mask and score mods
#define KT __nv_bfloat16
#define KMASK (M_CAUSAL | M_DOCUMENT)
#define KMOD (0)
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, 0, seg, S, D, H, H, 0, 0, 0, 0, 0, 0.0);

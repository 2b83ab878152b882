// problem: attention/006_document_causal
// expect: mismatch
// near miss: plain causal, documents ignored
#define KT __nv_bfloat16
#define KMASK (M_CAUSAL)
#define KMOD (0)
// @launch naive_attention<<<dim3(cdiv(S, 8), H, B), 256>>>(q, k, v, out, 0, seg, S, D, H, H, 0, 0, 0, 0, 0, 0.0);

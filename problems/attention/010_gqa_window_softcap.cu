// Reference for attention/010_gqa_window_softcap: the suite's shared flash-style kernel in double
// (shared/attention_ref.cuh describes the method), with this problem's mask and score mods.
#define ATT_T __nv_bfloat16
#define ATT_MASK (CAUSAL | WINDOW)
#define ATT_MOD (SOFTCAP)
#include "shared/attention_ref.cuh"
// @launch attention_ref<<<dim3(cdiv(S, 64), HQ, B), 256, 8*(64*132+128*68+64*68)>>>(q, k, v, out, 0, 0, S, D, HQ, HKV, W, 0, 0, 0, 0, softcap);

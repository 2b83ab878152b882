// Reference for attention/004_alibi_causal: the suite's shared flash-style kernel in double
// (shared/attention_ref.cuh describes the method), with this problem's mask and score mods.
#define ATT_T __nv_bfloat16
#define ATT_MASK (CAUSAL)
#define ATT_MOD (ALIBI)
#include "shared/attention_ref.cuh"
// @launch attention_ref<<<dim3(cdiv(S, 64), H, B), 256, 8*(64*132+128*68+64*68)>>>(q, k, v, out, 0, 0, S, D, H, H, 0, 0, 0, 0, 0, 0.0);

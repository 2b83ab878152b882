// Reference for attention/009_neighborhood_2d: the suite's shared flash-style kernel in double
// (shared/attention_ref.cuh describes the method), with this problem's mask and score mods.
#define ATT_T __half
#define ATT_MASK (NEIGHBOR2D)
#define ATT_MOD (0)
#include "shared/attention_ref.cuh"
// @launch attention_ref<<<dim3(cdiv(S, 64), H, B), 256, 8*(64*132+128*68+64*68)>>>(q, k, v, out, 0, 0, S, D, H, H, 0, CH, CW, KH, KW, 0.0);

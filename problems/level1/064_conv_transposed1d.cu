// Reference for level1/064_conv_transposed1d: ConvTranspose1d (no bias), computed as the 2-D
// transposed convolution of a height-1 image with a height-1 kernel (H = OH = KH = 1, SH = 1,
// PH = 0, DH = 1), so L, OL, K, S, P play the roles of W, OW, KW, SW, PW, by the kernel of
// shared/conv_transpose2d_ref.cuh (its header describes the method).
#define KWF 3   /* kernel width of the fast path (stride 1, dilation 1 along the row) */
#include "shared/conv_transpose2d_ref.cuh"
// @launch conv_transpose2d_ref<<<dim3(min(G*cdiv(CO/G, 16)*cdiv(cdiv(OL, 4), 128), 2147483647), min(B, 65535)), 128>>>(x, weight, y, B, CI, CO, 1, L, 1, OL, 1, K, 1, S, 0, P, 1, 1, G);

// Reference for level1/069_conv_transposed2d_asymmetric_input_asymmetric_kernel: ConvTranspose2d
// (no bias), by the kernel of shared/conv_transpose2d_ref.cuh (its header describes the method).
#define KWF 5   /* kernel width of the fast path (stride 1, dilation 1 along the row) */
#include "shared/conv_transpose2d_ref.cuh"
// @launch conv_transpose2d_ref<<<dim3(min(G*cdiv(CO/G, 16)*cdiv(OH*cdiv(OW, 4), 128), 2147483647), min(B, 65535)), 128>>>(x, weight, y, B, CI, CO, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DILH, DILW, G);

// Reference for level1/062_conv2d_square_input_asymmetric_kernel: direct 2-D convolution (no bias;
// stride, padding, dilation and groups as in the manifest), by the kernel of shared/conv2d_ref.cuh
// (its header describes the method).
#define CC 3 /* input channels per chunk */
#include "shared/conv2d_ref.cuh"
// @launch conv2d_ref<<<min(B*G*cdiv(CO/G, 16)*cdiv(OW, 64)*cdiv(OH, 8), 1048576), 128, 12*(3*KH*KW*16 + 3*(7*S + (KH - 1)*DIL + 1)*(63*S + (KW - 1)*DIL + 1))>>>(x, weight, y, B, CI, CO, H, W, OH, OW, KH, KW, S, S, P, P, DIL, DIL, G);

// Reference for level1/055_conv2d_asymmetric_input_square_kernel: direct 2-D convolution (no bias;
// stride, padding, dilation and groups as in the manifest), by the kernel of shared/conv2d_ref.cuh
// (its header describes the method).
#define CC 4 /* input channels per chunk */
#include "shared/conv2d_ref.cuh"
// @launch conv2d_ref<<<min(B*G*cdiv(CO/G, 16)*cdiv(OW, 64)*cdiv(OH, 8), 1048576), 128, 12*(4*K*K*16 + 4*(7*S + (K - 1)*DIL + 1)*(63*S + (K - 1)*DIL + 1))>>>(x, weight, y, B, CI, CO, H, W, OH, OW, K, K, S, S, P, P, DIL, DIL, G);

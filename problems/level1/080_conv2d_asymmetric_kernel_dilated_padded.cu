// Reference for level1/080_conv2d_asymmetric_kernel_dilated_padded: direct 2-D convolution (no
// bias; stride, padding, dilation and groups as in the manifest), by the kernel of
// shared/conv2d_ref.cuh (its header describes the method).
#define CC 2 /* input channels per chunk */
#include "shared/conv2d_ref.cuh"
// @launch conv2d_ref<<<min(B*cdiv(CO, 16)*cdiv(OW, 64)*cdiv(OH, 8), 1048576), 128, 12*(2*KH*KW*16 + 2*(7*S + (KH - 1)*DH + 1)*(63*S + (KW - 1)*DW + 1))>>>(x, weight, y, B, CI, CO, H, W, OH, OW, KH, KW, S, S, PH, PW, DH, DW, 1);

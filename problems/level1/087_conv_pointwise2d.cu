// Reference for level1/087_conv_pointwise2d: 1x1 convolution (a per-pixel matrix-vector product
// over channels, no bias), by the kernel of shared/pointwise_ref.cuh (its header describes the
// method) on the float input.
#define PW_IN float
#include "shared/pointwise_ref.cuh"
// @launch pointwise_ref<<<dim3(min(cdiv(H*W, 256) * cdiv(CO, 16), 2147483647), min(B, 65535)), 128>>>(x, weight, y, B, CI, CO, H*W);

// Reference for level1/076_conv1d_dilated_strided: direct 1-D convolution (no padding, no
// bias, groups = 1; stride S, dilation DIL), by the general kernel of shared/conv1d_ref.cuh
// with padding 0 and groups 1 (its header describes the method).
#define COB 16  /* output channels per thread (one group's; a partial last block is masked) */
#include "shared/conv1d_ref.cuh"
// @launch conv1d_ref<<<dim3(min(cdiv(OL, 256) * cdiv(CO, 16), 2147483647), min(B, 65535)), 128>>>(x, weight, y, B, CI, CO, L, OL, K, S, 0, DIL, 1);

// Reference for level1/067_conv1d: direct 1-D convolution (stride, padding, dilation, groups as
// torch), by the kernel of shared/conv1d_ref.cuh (its header describes the method).
#define COB 16  /* output channels per thread (one group's; a partial last block is masked) */
#include "shared/conv1d_ref.cuh"
// @launch conv1d_ref<<<dim3(min(cdiv(OL, 256) * G * cdiv(CO / G, 16), 2147483647), min(B, 65535)), 128>>>(x, weight, y, B, CI, CO, L, OL, K, S, P, DIL, G);

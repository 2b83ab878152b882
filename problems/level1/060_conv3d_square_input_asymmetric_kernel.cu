// Reference for level1/060_conv3d_square_input_asymmetric_kernel: direct 3-D convolution
// (stride, padding, dilation, groups as torch), register-blocked. A block of NT threads
// takes one batch entry, COB consecutive output channels of one group and NT*PT output
// positions of the flattened (od, oh, ow) volume; each thread owns PT positions (NT apart,
// so loads and stores coalesce) x COB channels in double accumulators. The block stages
// those channels' weights as double in shared memory, for as many input channels as fit,
// laid out [c][kd][kh][kw][co] and read as broadcast double2 loads, so each x value loaded
// once (through L1) feeds COB FMAs; the x values of CU kernel columns are loaded together
// to keep many loads in flight. Exact float products (float -> double, fma in double),
// summed in double over (c, kd, kh, kw) in order, rounded to float once; 64-bit tensor
// offsets.
#include "shared/conv3d_blocked_ref.cuh"
// @launch conv3d_ref<<<dim3(min(cdiv(OD*OH*OW, 256) * G * cdiv(CO / G, 16), 2147483647), min(B, 65535)), 128>>>(x, weight, y, B, CI, CO, D, H, W, OD, OH, OW, KD, KH, KW, S, S, S, P, P, P, DIL, DIL, DIL, G);

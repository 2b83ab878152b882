// Reference for level1/081_conv_transpose2d_dilated_padded_strided: transposed 2-D
// convolution computed per OUTPUT element (a gather: no atomics). Output o receives
// tap k from input i = (o + P - k*DIL) / S when the division is exact and i is in
// range. Float products summed in double; grid-stride loop, 64-bit indices.
#include "shared/conv_transpose2d_gather_ref.cuh"
// @launch conv_transpose2d_ref<<<min(cdiv(B*CO*OH*OW, 256), 1048576), 256>>>(x, weight, y, B, CI, H, W, CO, OH, OW, K, K, S, S, P, P, DIL, DIL);

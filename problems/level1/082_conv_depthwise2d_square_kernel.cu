// Reference for level1/082_conv_depthwise2d_square_kernel: depthwise 2-D convolution
// (groups = channels: output channel co sees only input channel co / (CO/CI)), no
// bias; one thread per output element in a grid-stride loop with 64-bit indices,
// float products summed in double.
#include "shared/depthwise_conv2d_ref.cuh"
// @launch conv2d_ref<<<min(cdiv(B*C*OH*OW, 256), 1048576), 256>>>(x, weight, y, B, C, H, W, C, OH, OW, K, K, S, S, P, P, 1, 1, C);

"""level2_specs_c: chain specs of KernelBench level 2, problems 073-100, read by tools/gen_level2.py
beside tools/level2_specs.py (whose problem() and helpers these use) and level2_specs_b.py.
Facts (ops, order, semantics, default shapes, constants) follow KernelBench's level2/*.py; the
text and code are ours. See level2_specs.py for the spec format; "blocked" Conv3d leads and
level2_specs_b.py's conventions are used as there. Problems 080 and 083 are identically zero
(marked "degenerate"); tolerances say per problem why they are what they are."""
import level2_specs as base
from gen_level2 import Ew, Norm, Pool, Reduce, Save, Softmax  # noqa: F401
from level2_specs import C2, N01, TRAIN_BN, affine, bias_in, gn, problem  # noqa: F401

_N0 = len(base.SPECS)  # problem() appends to level2_specs.SPECS; ours are the ones added below

# torch.ones parameters: 1 in the first check; the checks that vary constants draw them N(1, 0.5)
# (085's per-channel scale, any sign) or uniform(0.5, 1.5) (084's softmax temperature: its
# tolerance allows logits scaled by up to ~2.5, and a positive scale keeps the softmax's sense)
ONES = {"dist": "constant", "value": 1, "vary": {"dist": "normal", "mean": 1, "std": 0.5}}
ONES_POS = {"dist": "constant", "value": 1, "vary": {"dist": "uniform", "lo": 0.5, "hi": 1.5}}
BLOCKED = set()  # Conv3d-led problems that use shared/conv3d_blocked_ref.cuh


def tol(atol, rtol, why):
    return {"atol": atol, "rtol": rtol, "why": why}


def last():
    return base.SPECS[-1]


# Why texts shared by several problems.
GEMM_O1 = ("KernelBench's float32 tolerance. Outputs are O(0.1..3) (Linear outputs have std ~0.58 at "
           "PyTorch's init and N(0, 1) inputs); a float32 GEMM over K = IN = 8192 errs by ~1e-6 "
           "(at most ~1.2e-5) and the epilogue's float32 math by a few ulps, well inside 1e-4; a zero, "
           "constant or copied-through output and a skipped or reordered epilogue step fail")
CONV_O1 = ("KernelBench's float32 tolerance. Outputs are O(0.1..3); a float32 convolution errs by "
           "~1e-7 (exact products, short sums) and the epilogue's float32 math by a few ulps, well "
           "inside 1e-4; a zero, constant or copied-through output and a skipped or reordered "
           "epilogue step fail")
GN_SMALL = {"B": 2, "CI": 3, "CO": 16, "H": 10, "W": 12}
GN_ALT = [{"B": 3, "CI": 5, "CO": 32, "H": 33, "W": 17}, {"B": 1, "CI": 16, "CO": 48, "H": 67, "W": 131}]
LIN_GN_SMALL = {"B": 4, "IN": 40, "OUT": 64, "NG": 16}
LIN_GN_ALT = [{"B": 5, "IN": 257, "OUT": 96, "NG": 24}, {"B": 33, "IN": 1024, "OUT": 1000, "NG": 125}]
C3_SMALL = {"B": 2, "CI": 3, "CO": 16, "D": 6, "H": 8, "W": 10}
C3_ALT = [{"B": 3, "CI": 5, "CO": 24, "D": 9, "H": 13, "W": 11}, {"B": 1, "CI": 4, "CO": 32, "D": 6, "H": 34, "W": 67}]

# ---------------------------------------------------------------- problems 73-80

problem(73, "conv2d_batch_norm_scaling", "Conv2d, BatchNorm2d (training), scale", "conv2d",
        dict(B=128, CI=8, CO=64, H=128, W=128, K=3, **C2),
        [Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm2d in training mode (batch statistics over B, OH, OW, biased variance), eps, affine bn_weight, bn_bias (CO)"),
         Ew("v * scaling_factor", "multiply by scaling_factor")],
        ["x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])", "x = x * d['scaling_factor']"],
        ["B", "CO", "OH", "OW"], extra_inputs=affine("bn", "CO"), params=[("eps", 1e-5), ("scaling_factor", 2.0)],
        tol=tol(1e-4, 1e-4, CONV_O1 + "; BatchNorm statistics over B*OH*OW = 2M values per channel err by ~1e-6 relative when reduced in blocks"),
        notes=TRAIN_BN + " The Conv2d bias cancels in the BatchNorm (a kernel may drop it).")

problem(74, "conv_transpose3d_leaky_relu_multiply_leaky_relu_max", "ConvTranspose3d, LeakyReLU, multiply, LeakyReLU, MaxPool3d", "convT3d",
        dict(B=16, CI=16, CO=32, D=16, H=32, W=32, K=3, S=2, P=1, OP=1),
        [Ew("l2_leaky(v, 0.2)", "LeakyReLU(0.2)"), Ew("v * {multiplier}", "multiply by multiplier (CO, 1, 1, 1)"),
         Ew("l2_leaky(v, 0.2)", "LeakyReLU(0.2) again"), Pool("max", ["2", "2", "2"], ["2", "2", "2"], "MaxPool3d(kernel 2, stride 2)")],
        ["x = F.leaky_relu(x, negative_slope=0.2)", "x = x * multiplier", "x = F.leaky_relu(x, negative_slope=0.2)",
         "x = F.max_pool3d(x, kernel_size=2)"],
        ["B", "CO", "OD/2", "OH/2", "OW/2"], extra_inputs=[bias_in("multiplier", ["CO", 1, 1, 1])],
        tol=tol(1e-4, 1e-4, CONV_O1),
        notes="multiplier is torch.randn in KernelBench: N(0, 1), so about half the channels flip sign between the two LeakyReLUs.")

problem(75, "gemm_group_norm_min_bias_add", "Linear, GroupNorm, min over features, bias add broadcast to rank 4", "linear",
        dict(B=1024, IN=8192, OUT=8192, NG=512),
        [Norm("group", "eps", "gn_weight", "gn_bias", "GroupNorm(NG groups of OUT/NG features, eps, affine gn_weight, gn_bias (OUT))", groups="NG"),
         Reduce(1, 2, "min", True, "min over the OUT features, keepdim: (B, 1)"),
         Ew("v + {extra_bias}", "add extra_bias (1, OUT, 1, 1): the (B, 1) minima broadcast against it (numpy rules, right-aligned) to (1, OUT, B, 1), y[0, o, b, 0] = min[b] + extra_bias[o]",
            out_shape=[1, "OUT", "B", 1])],
        ["x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])", "x = torch.min(x, dim=1, keepdim=True)[0]",
         "x = x + extra_bias"],
        [1, "OUT", "B", 1], extra_inputs=affine("gn", "OUT") + [bias_in("extra_bias", [1, "OUT", 1, 1])],
        params=[("eps", 1e-5)], small=LIN_GN_SMALL, alt=LIN_GN_ALT,
        tol=tol(1e-4, 1e-4, "outputs are a per-row minimum of GroupNorm outputs (about bn_bias - 3.5 * gn_weight, magnitude 1..5) plus an N(0, 1) bias; the GroupNorm of 16 Linear outputs is scale-free, so float32 errs by ~1e-6 relative, inside 1e-4; an output of shape (B, OUT) read as (1, OUT, B, 1) (the transposed broadcast), a skipped bias and a min over the wrong dim fail"),
        notes="KernelBench adds a bias of shape (1, OUT, 1, 1) to the (B, 1) row minima, so its output has shape (1, OUT, B, 1) (rank 4, batch in dim 2); kept exactly.")

problem(76, "gemm_add_relu", "matmul (no bias), bias add, ReLU", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v + {extra_bias}", "add extra_bias (OUT)"), Ew("fmax(v, 0.0)", "ReLU")],
        ["x = x + extra_bias", "x = torch.relu(x)"], ["B", "OUT"],
        bias=False, extra_inputs=[bias_in("extra_bias", ["OUT"])], tol=tol(1e-4, 1e-4, GEMM_O1),
        notes="The Linear has no bias; extra_bias is torch.randn in KernelBench: N(0, 1).")

problem(77, "conv_transpose3d_scale_batch_norm_global_avg_pool", "ConvTranspose3d, scale, BatchNorm3d (training), global average pool", "convT3d",
        dict(B=16, CI=64, CO=128, D=16, H=32, W=32, K=5, S=1, P=0, OP=0),
        [Ew("v * scale_factor", "multiply by scale_factor"),
         Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm3d in training mode (batch statistics over B, OD, OH, OW, biased variance), eps, affine bn_weight, bn_bias (CO)"),
         Reduce(2, 5, "mean", True, "global average pool (AdaptiveAvgPool3d to 1x1x1): (B, CO, 1, 1, 1)")],
        ["x = x * d['scale_factor']", "x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])",
         "x = F.adaptive_avg_pool3d(x, (1, 1, 1))"],
        ["B", "CO", 1, 1, 1], extra_inputs=affine("bn", "CO"), params=[("scale_factor", 2.0), ("eps", 1e-5)],
        tol=tol(1e-5, 1e-4, "each output is bn_bias + bn_weight * (the (b, c) spatial mean - the channel's batch mean) / std: bn_bias plus a deviation of ~1e-2 that carries the whole computation; 1e-5 absolute keeps an output of bn_bias alone (or any batch-independent output) failing, while float32 statistics over B*OD*OH*OW = 415k values err by ~1e-6 relative when reduced in blocks, ~1e-7 absolute here"),
        notes=TRAIN_BN + " The ConvTranspose3d bias and scale_factor cancel in the BatchNorm except through eps (a kernel may drop the bias, not the scale). KernelBench's ConvTranspose3d here has stride 1, no padding (S = 1, P = OP = 0).")

problem(78, "conv_transpose3d_max_max_sum", "ConvTranspose3d, MaxPool3d(2), MaxPool3d(3), sum over channels", "convT3d",
        dict(B=16, CI=32, CO=64, D=32, H=32, W=32, K=5, S=2, P=2, OP=0),
        [Pool("max", ["2", "2", "2"], ["2", "2", "2"], "MaxPool3d(kernel 2, stride 2, floor)"),
         Pool("max", ["3", "3", "3"], ["3", "3", "3"], "MaxPool3d(kernel 3, stride 3, floor)"),
         Reduce(1, 2, "sum", True, "sum over the channel dim, keepdim: (B, 1, OD/2/3, OH/2/3, OW/2/3)")],
        ["x = F.max_pool3d(x, kernel_size=2)", "x = F.max_pool3d(x, kernel_size=3)", "x = torch.sum(x, dim=1, keepdim=True)"],
        ["B", 1, "OD/2/3", "OH/2/3", "OW/2/3"],
        small={"B": 2, "CI": 3, "CO": 8, "D": 6, "H": 7, "W": 8},
        alt=[{"B": 3, "CI": 5, "CO": 7, "D": 7, "H": 9, "W": 11}, {"B": 1, "CI": 4, "CO": 16, "D": 6, "H": 13, "W": 25}],
        tol=tol(1e-4, 1e-5, "each output sums CO maxima of 216 transposed-convolution outputs (magnitude ~25); float32 errs by ~1e-6 absolute there, while 1e-5 relative (2.5e-4 absolute) still fails TF32 products (~5e-4 on the sum), a skipped pool, a pool with the wrong window and a sum over the wrong dim"),
        notes="KernelBench's ConvTranspose3d here has no output padding (OP = 0): OD = 63 at the default dims, 31 after the first pool (the last row is dropped), 10 after the second (the last one dropped).")

problem(79, "conv3d_multiply_instance_norm_clamp_multiply_max", "Conv3d, multiply, InstanceNorm3d, clamp, multiply, max over channels", "conv3d",
        dict(B=128, CI=3, CO=16, D=16, H=32, W=32, K=3, **C2),
        [Ew("v * {multiplier}", "multiply by multiplier (CO, 1, 1, 1)"),
         Norm("instance", "eps", None, None, "InstanceNorm3d (per (b, c) over OD, OH, OW, biased variance, eps, no affine)"),
         Ew("l2_clamp(v, clamp_min, clamp_max)", "clamp to [clamp_min, clamp_max]"),
         Ew("v * {multiplier}", "multiply by multiplier again"),
         Reduce(1, 2, "max", False, "max over the channel dim (no keepdim): (B, OD, OH, OW)")],
        ["x = x * multiplier", "x = F.instance_norm(x, eps=d['eps'])", "x = torch.clamp(x, d['clamp_min'], d['clamp_max'])",
         "x = x * multiplier", "x = torch.max(x, dim=1)[0]"],
        ["B", "OD", "OH", "OW"], extra_inputs=[bias_in("multiplier", ["CO", 1, 1, 1])],
        params=[("eps", 1e-5), ("clamp_min", -1.0), ("clamp_max", 1.0)],
        small=C3_SMALL, alt=C3_ALT, tol=tol(1e-4, 1e-4, CONV_O1),
        notes="multiplier is torch.randn in KernelBench: N(0, 1). InstanceNorm3d has affine=False and track_running_stats=False (statistics of the input itself, in training and eval alike).")
last()["lead"]["blocked"] = True

problem(80, "gemm_max_subtract_gelu", "Linear, max over features, subtract the mean, GELU (identically zero)", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Reduce(1, 2, "max", True, "max over the OUT features (KernelBench's max_dim = 1), keepdim: (B, 1)"),
         Ew("v - v", "subtract the mean over dim 1, a dim of size 1, i.e. the value itself: exactly 0"),
         Ew("l2_gelu(v)", "GELU (erf form)")],
        ["x = torch.max(x, dim=1, keepdim=True).values", "x = x - x.mean(dim=1, keepdim=True)", "x = F.gelu(x)"],
        ["B", 1], tol=tol(1e-4, 1e-4, "the output is exactly 0 for finite inputs (the problem is degenerate); KernelBench's float32 tolerance"),
        degenerate="after the max over dim 1 with keepdim the tensor is (B, 1); subtracting its mean over dim 1 (a dim of size 1) leaves exactly 0 and GELU(0) = 0, so the output is identically zero for any finite input (KernelBench's own problem 80; its docstring's (batch, out_features) shape is not what its code returns)",
        notes="The output is identically zero: the mean over a dim of size 1 is the value itself.")

# ---------------------------------------------------------------- problems 81-90

problem(81, "gemm_swish_divide_clamp_tanh_clamp", "Linear, swish, divide, clamp, tanh, clamp", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v * l2_sigmoid(v)", "swish (x * sigmoid(x))"), Ew("v / 2.0", "divide by 2"), Ew("l2_clamp(v, -1.0, 1.0)", "clamp to [-1, 1]"),
         Ew("tanh(v)", "tanh"), Ew("l2_clamp(v, -1.0, 1.0)", "clamp to [-1, 1]")],
        ["x = x * torch.sigmoid(x)", "x = x / 2.0", "x = torch.clamp(x, min=-1.0, max=1.0)", "x = torch.tanh(x)",
         "x = torch.clamp(x, min=-1.0, max=1.0)"], ["B", "OUT"],
        tol=tol(2e-5, 1e-4, "outputs are tanh(swish(x)/2), mostly in [-0.14, 0.6]; a float32 GEMM over K = 8192 errs by at most ~1.2e-5 on the Linear output (measured against float64: max 9e-6 over 262k outputs) and the epilogue's slope is at most ~0.45, inside 2e-5 absolute, which still fails TF32 products (mean error ~1.4e-4 on the Linear output), zero or copied-through outputs and a skipped step"))

problem(82, "conv2d_tanh_scaling_bias_add_max", "Conv2d, tanh, scale, bias add, MaxPool2d", "conv2d",
        dict(B=128, CI=8, CO=64, H=256, W=256, K=3, PK=4, **C2),
        [Ew("tanh(v)", "tanh"), Ew("v * scaling_factor", "multiply by scaling_factor"), Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1)"),
         Pool("max", ["PK", "PK"], ["PK", "PK"], "MaxPool2d(kernel PK, stride PK, floor)")],
        ["x = torch.tanh(x)", "x = x * d['scaling_factor']", "x = x + extra_bias", "x = F.max_pool2d(x, d['PK'])"],
        ["B", "CO", "OH/PK", "OW/PK"], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1])], params=[("scaling_factor", 2.0)],
        tol=tol(1e-4, 1e-4, CONV_O1),
        notes="extra_bias is torch.randn in KernelBench: N(0, 1). PK is KernelBench's pool_kernel_size (4).")

problem(83, "conv3d_group_norm_min_clamp_dropout", "Conv3d, GroupNorm, min with 0, clamp to [0, 1], dropout (identically zero)", "conv3d",
        dict(B=128, CI=3, CO=16, D=16, H=64, W=64, K=3, NG=8, **C2),
        [gn("gn", "NG"), Ew("fmin(v, min_value)", "min(x, min_value) elementwise"),
         Ew("l2_clamp(v, min_value, max_value)", "clamp to [min_value, max_value]"),
         Ew("v * {dropout_mask}", "dropout: multiply by dropout_mask")],
        ["x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])",
         "x = torch.min(x, torch.tensor(d['min_value'], dtype=x.dtype, device=x.device))",
         "x = torch.clamp(x, min=d['min_value'], max=d['max_value'])", "x = x * dropout_mask"],
        ["B", "CO", "OD", "OH", "OW"],
        extra_inputs=affine("gn", "CO") + [{"name": "dropout_mask", "dtype": "f32", "shape": ["B", "CO", "OD", "OH", "OW"], "init": {"dist": "bernoulli", "p": 0.2}}],
        params=[("eps", 1e-5), ("min_value", 0.0), ("max_value", 1.0)], small=C3_SMALL, alt=C3_ALT,
        tol=tol(1e-4, 1e-4, "the output is exactly 0 (the problem is degenerate); KernelBench's float32 tolerance"),
        degenerate="min(x, 0) is <= 0 and the clamp to [0, 1] then gives exactly 0 everywhere, and dropout keeps 0: the output is identically zero for any input and init (KernelBench's own problem 83)",
        notes="Dropout(p = 0.2) runs in training mode in KernelBench, with a mask drawn per call; here the mask is the input dropout_mask (0 with probability 0.2, else 1/0.8 = 1.25), which makes the problem deterministic. The output is identically zero: min with 0 and then a clamp at 0 leave nothing.")
last()["lead"]["blocked"] = True

problem(84, "gemm_batch_norm_scaling_softmax", "Linear, BatchNorm1d (training), scale, softmax over features", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm1d in training mode (statistics over the batch, biased variance), eps, affine bn_weight, bn_bias (OUT)"),
         Ew("v * {scale}", "multiply by scale (shape (1), a broadcast scalar)"), Softmax(1, 2, "softmax over the OUT features")],
        ["x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])", "x = scale * x", "x = torch.softmax(x, dim=1)"],
        ["B", "OUT"], extra_inputs=affine("bn", "OUT") + [bias_in("scale", [1], ONES_POS)], params=[("eps", 1e-5)],
        tol=tol(1e-9, 2e-4, "a softmax over 8192 features: outputs are ~1e-4 or far less, so atol must sit far below them (at KernelBench's 1e-2, or even 1e-4, an all-zero or uniform output passes); a float32 GEMM errs by at most ~1.2e-5 on the Linear output, ~5e-5 on a normalised logit with bn_weight up to ~2.5, so ~5e-5 relative on each probability, inside 2e-4 relative, while TF32 products (mean ~2.4e-4 on the logits), eval-mode statistics and a skipped affine fail"),
        notes=TRAIN_BN + " scale is torch.ones((1,)) in KernelBench: a constant 1 here (multiplying by it is exact).")

problem(85, "conv2d_group_norm_scale_max_pool_clamp", "Conv2d, GroupNorm, scale, MaxPool2d, clamp", "conv2d",
        dict(B=128, CI=8, CO=64, H=128, W=128, K=3, NG=16, PK=4, **C2),
        [gn("gn", "NG"), Ew("v * {scale}", "multiply by scale (CO, 1, 1)"),
         Pool("max", ["PK", "PK"], ["PK", "PK"], "MaxPool2d(kernel PK, stride PK, floor)"),
         Ew("l2_clamp(v, clamp_min, clamp_max)", "clamp to [clamp_min, clamp_max]")],
        ["x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])", "x = x * scale", "x = F.max_pool2d(x, kernel_size=d['PK'])",
         "x = torch.clamp(x, d['clamp_min'], d['clamp_max'])"],
        ["B", "CO", "OH/PK", "OW/PK"], extra_inputs=affine("gn", "CO") + [bias_in("scale", ["CO", 1, 1], ONES)],
        params=[("eps", 1e-5), ("clamp_min", 0.0), ("clamp_max", 1.0)], small=GN_SMALL, alt=GN_ALT,
        tol=tol(1e-4, 1e-4, CONV_O1 + "; many outputs sit at the clamp bound 1 (a 4x4 max of normalised values), the rest decide"),
        notes="scale is torch.ones in KernelBench: a constant 1 here. A 4x4 max of GroupNorm outputs exceeds 1 for most pixels, so many outputs are clamped to 1 (about 70% at the default dims here, ~2% at 0; with KernelBench's own GroupNorm init about 94% at 1); the others carry the check.")

problem(86, "matmul_divide_gelu", "Linear, divide, GELU", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v / divisor", "divide by divisor"), Ew("l2_gelu(v)", "GELU (erf form)")],
        ["x = x / d['divisor']", "x = F.gelu(x)"], ["B", "OUT"], params=[("divisor", 10.0)],
        tol=tol(2e-6, 1e-4, "outputs are GELU(x/10) with x ~ N(0, 0.58): ~0.03, so KernelBench's 1e-4 absolute would accept almost anything near x/20; a float32 GEMM over K = 8192 errs by at most ~1.2e-5, ~6e-7 after /10 and GELU's slope 0.5 (measured: max 5.4e-7 over 262k outputs), inside 2e-6, while TF32 products (mean error ~7e-6 here) and a skipped divide fail"))

problem(87, "conv2d_subtract_subtract_mish", "Conv2d, subtract, subtract, Mish", "conv2d",
        dict(B=128, CI=8, CO=64, H=256, W=256, K=3, **C2),
        [Ew("v - subtract_value_1", "subtract subtract_value_1"), Ew("v - subtract_value_2", "subtract subtract_value_2"), Ew("l2_mish(v)", "Mish")],
        ["x = x - d['subtract_value_1']", "x = x - d['subtract_value_2']", "x = F.mish(x)"], ["B", "CO", "OH", "OW"],
        params=[("subtract_value_1", 0.5), ("subtract_value_2", 0.2)], tol=tol(1e-4, 1e-4, CONV_O1))

problem(88, "gemm_group_norm_swish_multiply_swish", "Linear, GroupNorm, swish, multiply, swish", "linear",
        dict(B=1024, IN=8192, OUT=8192, NG=256),
        [Norm("group", "eps", "gn_weight", "gn_bias", "GroupNorm(NG groups of OUT/NG features, eps, affine gn_weight, gn_bias (OUT))", groups="NG"),
         Ew("v * l2_sigmoid(v)", "swish (x * sigmoid(x))"), Ew("v * {multiply_weight}", "multiply by multiply_weight (OUT)"),
         Ew("v * l2_sigmoid(v)", "swish again")],
        ["x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])", "x = x * torch.sigmoid(x)", "x = x * multiply_weight",
         "x = x * torch.sigmoid(x)"], ["B", "OUT"],
        extra_inputs=affine("gn", "OUT") + [bias_in("multiply_weight", ["OUT"])], params=[("eps", 1e-5)],
        small=LIN_GN_SMALL, alt=LIN_GN_ALT,
        tol=tol(1e-4, 1e-4, "KernelBench's float32 tolerance. Outputs are O(0.1..5); the GroupNorm of 32 Linear outputs is scale-free, so float32 errs by ~1e-6 relative, inside 1e-4; a skipped norm, affine, multiply or swish fails"),
        notes="multiply_weight is torch.randn in KernelBench: N(0, 1).")

problem(89, "conv_transpose3d_max_pool_softmax_subtract_swish_max", "ConvTranspose3d, MaxPool3d, softmax over channels, subtract, swish, max over channels", "convT3d",
        dict(B=128, CI=3, CO=16, D=16, H=32, W=32, K=3, S=2, P=1, OP=1),
        [Pool("max", ["2", "2", "2"], ["2", "2", "2"], "MaxPool3d(kernel 2, stride 2, no padding)"),
         Softmax(1, 2, "softmax over the channel dim"),
         Ew("v - {subtract}", "subtract subtract (CO), viewed as (1, CO, 1, 1, 1)"),
         Ew("v * l2_sigmoid(v)", "swish (x * sigmoid(x))"),
         Reduce(1, 2, "max", False, "max over the channel dim (no keepdim): (B, OD/2, OH/2, OW/2)")],
        ["x = F.max_pool3d(x, kernel_size=2, stride=2, padding=0)", "x = torch.softmax(x, dim=1)",
         "x = x - subtract.view(1, -1, 1, 1, 1)", "x = torch.sigmoid(x) * x", "x = torch.max(x, dim=1)[0]"],
        ["B", "OD/2", "OH/2", "OW/2"], extra_inputs=[bias_in("subtract", ["CO", 1, 1, 1])],
        tol=tol(1e-5, 1e-5, "outputs are swish(p - subtract[c]) maximised over channels, ~1.5, and vary with the softmax probabilities p (~1/16, spread ~0.05): KernelBench's 1e-4 would let p be off by ~1e-4; float32 errs by ~1e-7 here, inside 1e-5 + 1e-5 relative, while a softmax over the wrong dim, a skipped pool or a constant p fail"),
        notes="subtract is torch.randn(CO) in KernelBench, viewed as (1, CO, 1, 1, 1); its memory is the same (CO) vector, declared here with shape (CO, 1, 1, 1).")

problem(90, "conv3d_leaky_relu_sum_clamp_gelu", "Conv3d, LeakyReLU, add, clamp, GELU", "conv3d",
        dict(B=128, CI=8, CO=64, D=16, H=64, W=64, K=3, **C2),
        [Ew("l2_leaky(v, 0.2)", "LeakyReLU(0.2)"), Ew("v + {sum_tensor}", "add sum_tensor (CO, 1, 1, 1)"),
         Ew("l2_clamp(v, -1.0, 1.0)", "clamp to [-1, 1]"), Ew("l2_gelu(v)", "GELU (erf form)")],
        ["x = F.leaky_relu(x, negative_slope=0.2)", "x = x + sum_tensor", "x = torch.clamp(x, min=-1.0, max=1.0)", "x = F.gelu(x)"],
        ["B", "CO", "OD", "OH", "OW"], extra_inputs=[bias_in("sum_tensor", ["CO", 1, 1, 1])],
        small=C3_SMALL, alt=C3_ALT, tol=tol(1e-4, 1e-4, CONV_O1),
        notes="sum_tensor is torch.randn in KernelBench: N(0, 1), so some channels sit mostly at a clamp bound.")
last()["lead"]["blocked"] = True

# ---------------------------------------------------------------- problems 91-100

problem(91, "conv_transpose2d_softmax_bias_add_scaling_sigmoid", "ConvTranspose2d, softmax over channels, bias add, scale, sigmoid", "convT2d",
        dict(B=128, CI=64, CO=128, H=64, W=64, K=4, S=2, P=1, OP=1),
        [Softmax(1, 2, "softmax over the channel dim"), Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1)"),
         Ew("v * scaling_factor", "multiply by scaling_factor"), Ew("l2_sigmoid(v)", "sigmoid")],
        ["x = torch.softmax(x, dim=1)", "x = x + extra_bias", "x = x * d['scaling_factor']", "x = torch.sigmoid(x)"],
        ["B", "CO", "OH", "OW"], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1])], params=[("scaling_factor", 2.0)],
        tol=tol(1e-6, 1e-5, "outputs are sigmoid(2 * (p + extra_bias)) with softmax probabilities p ~ 1/CO = 0.008 that vary by ~0.005: KernelBench's 1e-4 would accept p replaced by 1/CO nearly everywhere; float32 errs by ~1e-7 here, inside 1e-6 + 1e-5 relative, while a constant p, a softmax over the wrong dim and a skipped bias or scale fail"),
        notes="extra_bias is torch.randn in KernelBench: N(0, 1).")

problem(92, "conv2d_group_norm_tanh_hard_swish_residual_add_log_sum_exp", "Conv2d, GroupNorm, tanh, hardswish, residual add, logsumexp over channels", "conv2d",
        dict(B=128, CI=8, CO=64, H=128, W=128, K=3, NG=16, **C2),
        [Save("x_conv"), gn("gn", "NG"), Ew("tanh(v)", "tanh"), Ew("l2_hardswish(v)", "hardswish"),
         Ew("v + {x_conv}", "add the convolution output x_conv (residual)"),
         Reduce(1, 2, "lse", True, "logsumexp over the channel dim, keepdim: (B, 1, OH, OW)")],
        ["x_conv = x", "x = F.group_norm(x_conv, d['NG'], gn_weight, gn_bias, d['eps'])", "x = torch.tanh(x)", "x = F.hardswish(x)",
         "x = x_conv + x", "x = torch.logsumexp(x, dim=1, keepdim=True)"],
        ["B", 1, "OH", "OW"], extra_inputs=affine("gn", "CO"), params=[("eps", 1e-5)], small=GN_SMALL, alt=GN_ALT,
        tol=tol(1e-4, 1e-4, "KernelBench's float32 tolerance. Outputs are logsumexps over CO = 64 channels of values O(1) (~4.5); float32 errs by ~1e-6 relative, inside 1e-4; a skipped norm, activation or residual and a reduction over the wrong dim fail"))

problem(93, "conv_transpose2d_add_min_gelu_multiply", "ConvTranspose2d, add, min with 0, GELU, multiply", "convT2d",
        dict(B=128, CI=64, CO=128, H=64, W=64, K=4, S=2, P=0, OP=0),
        [Ew("v + add_value", "add add_value"), Ew("fmin(v, 0.0)", "min(x, 0) elementwise"), Ew("l2_gelu(v)", "GELU (erf form)"),
         Ew("v * multiply_value", "multiply by multiply_value")],
        ["x = x + d['add_value']", "x = torch.min(x, torch.tensor(0.0, dtype=x.dtype, device=x.device))", "x = F.gelu(x)",
         "x = x * d['multiply_value']"], ["B", "CO", "OH", "OW"], params=[("add_value", 0.5), ("multiply_value", 2.0)],
        tol=tol(1e-4, 1e-4, "outputs are 0 where the transposed convolution exceeds -add_value and 2*GELU(x + 0.5) in (-0.34, 0) below it; float32 errs by ~1e-7, inside 1e-4, while a zero output fails on the ~0.7% of elements below -0.5 (errors ~0.05) and a skipped add or min fails everywhere"),
        notes="KernelBench's ConvTranspose2d here has no padding (S = 2, P = OP = 0). At PyTorch's init the transposed-convolution outputs have std ~0.2, so x + 0.5 is negative for only about 0.7% of elements (the others are exactly 0 after the min); with KernelBench's uniform [0, 1) inputs it would be almost none.")

problem(94, "gemm_bias_add_hardtanh_mish_group_norm", "Linear, bias add, Hardtanh, Mish, GroupNorm", "linear",
        dict(B=1024, IN=8192, OUT=8192, NG=256),
        [Ew("v + {extra_bias}", "add extra_bias (OUT)"), Ew("l2_clamp(v, -1.0, 1.0)", "Hardtanh(-1, 1)"), Ew("l2_mish(v)", "Mish"),
         Norm("group", "eps", "gn_weight", "gn_bias", "GroupNorm(NG groups of OUT/NG features, eps, affine gn_weight, gn_bias (OUT))", groups="NG")],
        ["x = x + extra_bias", "x = F.hardtanh(x)", "x = F.mish(x)", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])"],
        ["B", "OUT"], extra_inputs=[bias_in("extra_bias", ["OUT"])] + affine("gn", "OUT"), params=[("eps", 1e-5)],
        small=LIN_GN_SMALL, alt=LIN_GN_ALT,
        tol=tol(1e-4, 1e-4, "KernelBench's float32 tolerance. Outputs are GroupNorm outputs O(1..3); float32 errs by ~1e-6 relative (the group variances are O(0.1), never tiny), inside 1e-4; a skipped bias, clamp, Mish or affine fails"),
        notes="extra_bias is torch.randn in KernelBench: N(0, 1) (the Linear has its own bias too).")

problem(95, "matmul_add_swish_tanh_gelu_hardtanh", "Linear, add, swish, tanh, GELU, Hardtanh", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v + {add_value}", "add add_value (OUT)"), Ew("v * l2_sigmoid(v)", "swish (sigmoid(x) * x)"), Ew("tanh(v)", "tanh"),
         Ew("l2_gelu(v)", "GELU (erf form)"), Ew("l2_clamp(v, -1.0, 1.0)", "Hardtanh(-1, 1)")],
        ["x = x + add_value", "x = torch.sigmoid(x) * x", "x = torch.tanh(x)", "x = F.gelu(x)", "x = F.hardtanh(x, min_val=-1, max_val=1)"],
        ["B", "OUT"], extra_inputs=[bias_in("add_value", ["OUT"])], tol=tol(1e-4, 1e-4, GEMM_O1),
        notes="add_value is torch.randn in KernelBench: N(0, 1). The final Hardtanh never binds (GELU of a tanh lies in (-0.17, 0.85)), as in KernelBench.")

problem(96, "conv_transpose3d_multiply_max_global_avg_pool_clamp", "ConvTranspose3d, multiply, MaxPool3d, global average pool, clamp", "convT3d",
        dict(B=128, CI=3, CO=16, D=16, H=32, W=32, K=3, S=2, P=1, OP=0, PK=2),
        [Ew("v * scale", "multiply by scale"), Pool("max", ["PK", "PK", "PK"], ["PK", "PK", "PK"], "MaxPool3d(kernel PK, stride PK, floor)"),
         Reduce(2, 5, "mean", True, "global average pool (AdaptiveAvgPool3d to 1x1x1): (B, CO, 1, 1, 1)"),
         Ew("l2_clamp(v, 0.0, 1.0)", "clamp to [0, 1]")],
        ["x = x * d['scale']", "x = F.max_pool3d(x, kernel_size=d['PK'])", "x = F.adaptive_avg_pool3d(x, (1, 1, 1))", "x = torch.clamp(x, min=0, max=1)"],
        ["B", "CO", 1, 1, 1], params=[("scale", 0.5)],
        tol=tol(1e-6, 1e-4, "outputs are means of ~15k pooled maxima, ~0.06, that differ between batch entries by ~1e-4: KernelBench's 1e-4 would accept one batch entry's values for all; float32 errs by ~1e-8 (pairwise or blocked sums; ~2e-7 for a plain sequential float sum), inside 1e-6 + 1e-4 relative, while a skipped pool or scale and a batch-independent output fail"),
        notes="KernelBench's ConvTranspose3d here has no output padding (OP = 0): OD = 31, OH = OW = 63 at the default dims. PK is its maxpool_kernel_size (2).")

problem(97, "matmul_batch_norm_bias_add_divide_swish", "Linear, BatchNorm1d (training), bias add, divide, swish", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm1d in training mode (statistics over the batch, biased variance), eps, affine bn_weight, bn_bias (OUT)"),
         Ew("v + {extra_bias}", "add extra_bias (shape (1), a broadcast scalar)"), Ew("v / divide_value", "divide by divide_value"),
         Ew("v * l2_sigmoid(v)", "swish (x * sigmoid(x))")],
        ["x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])", "x = x + extra_bias",
         "x = x / d['divide_value']", "x = x * torch.sigmoid(x)"], ["B", "OUT"],
        extra_inputs=affine("bn", "OUT") + [bias_in("extra_bias", [1])], params=[("eps", 1e-5), ("divide_value", 1.0)],
        tol=tol(1e-4, 1e-4, "KernelBench's float32 tolerance. Outputs are swish of batch-normalised values, O(1); the normalisation is scale-free, so float32 errs by ~1e-5 relative at most, inside 1e-4; eval-mode statistics, a skipped affine or bias fail"),
        notes=TRAIN_BN + " extra_bias is torch.randn((1,)) in KernelBench: one N(0, 1) value broadcast over everything.")

problem(98, "matmul_avg_pool_gelu_scale_max", "Linear, AvgPool1d over features, GELU, scale, max over features", "linear",
        dict(B=1024, IN=8192, OUT=8192, PK=16),
        [Pool("avg", ["PK"], ["PK"], "AvgPool1d(kernel PK, stride PK, floor) over the OUT features (KernelBench's unsqueeze(1), pool, squeeze(1)): (B, OUT/PK)"),
         Ew("l2_gelu(v)", "GELU (erf form)"), Ew("v * scale_factor", "multiply by scale_factor"),
         Reduce(1, 2, "max", False, "max over the pooled features: (B)")],
        ["x = F.avg_pool1d(x.unsqueeze(1), kernel_size=d['PK']).squeeze(1)", "x = F.gelu(x)", "x = x * d['scale_factor']",
         "x = torch.max(x, dim=1).values"], ["B"], params=[("scale_factor", 2.0)],
        small={"B": 4, "IN": 40, "OUT": 72}, alt=[{"B": 5, "IN": 257, "OUT": 131}, {"B": 33, "IN": 1024, "OUT": 1000}],
        tol=tol(1e-5, 1e-5, "outputs are the row maxima of 2*GELU of 16-feature means (std ~0.15), ~0.6; a float32 GEMM over K = 8192 errs by at most ~1.2e-5, ~3e-6 after the mean of 16 and ~5e-6 after GELU and the factor 2, inside 1e-5 + 1e-5 relative, which still fails TF32 products (~7e-5 here), a max over unpooled features and a skipped pool"),
        notes="PK is KernelBench's pool_kernel_size (16); a remainder of OUT/PK is dropped (floor), as AvgPool1d does.")

problem(99, "matmul_gelu_softmax", "Linear, GELU, softmax over features", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("l2_gelu(v)", "GELU (erf form)"), Softmax(1, 2, "softmax over the OUT features")],
        ["x = F.gelu(x)", "x = torch.softmax(x, dim=1)"], ["B", "OUT"],
        tol=tol(1e-9, 1e-4, "a softmax over 8192 features of GELU values in [-0.17, ~3]: outputs are ~1e-4 (spread over ~20x), so atol must sit far below them (at KernelBench's 1e-4 an all-zero output passes); a float32 GEMM errs by at most ~1.2e-5 on the logits, ~1.3e-5 relative on each probability, inside 1e-4, while TF32 products (~2e-4 relative) and a uniform output fail"))

problem(100, "conv_transpose3d_clamp_min_divide", "ConvTranspose3d, clamp from below, divide", "convT3d",
        dict(B=16, CI=64, CO=128, D=24, H=48, W=48, K=3, S=2, P=1, OP=0),
        [Ew("fmax(v, min_value)", "clamp from below at min_value (torch.clamp(x, min=min_value))"), Ew("v / divisor", "divide by divisor")],
        ["x = torch.clamp(x, min=d['min_value'])", "x = x / d['divisor']"], ["B", "CO", "OD", "OH", "OW"],
        params=[("min_value", -1.0), ("divisor", 2.0)],
        tol=tol(1e-5, 1e-4, "outputs are transposed-convolution outputs (std ~0.14) halved, ~0.07; float32 errs by ~1e-7 (216 exact-product terms), inside 1e-5, which keeps a skipped divide, a skipped bias and a zero output failing"),
        notes="KernelBench's ConvTranspose3d here has no output padding (OP = 0): OD = 47, OH = OW = 95 at the default dims. At PyTorch's init the transposed-convolution outputs have std ~0.14, so the clamp at -1 (7 std away) binds for only about 1 element in 10^6 (some hundreds at the default dims; in KernelBench, with uniform [0, 1) inputs, never); the output is the full transposed convolution.")

SPECS = base.SPECS[_N0:]

"""level2_specs: the chain specs of KernelBench level 2, one per problem (001-100), read by
tools/problems/gen_level2.py. Facts (ops, order, semantics, default shapes, constants) follow
KernelBench's level2/*.py; the text and code are ours. Each spec: the leading op with its
default dims, the chain (ops of level2_ops: Ew, Reduce, Softmax, Norm, Pool, Save, Reshape,
Linear2), extra inputs and params, the output shape, and `torch`: forward lines written by hand
(the independent transcription tools/baselines/crosscheck.py runs in float64).

Three sections, in the order they were written: problems 001-037 and 039-045, then 038 and
046-072, then 073-100 (formerly level2_specs.py, level2_specs_b.py, level2_specs_c.py). The
first line of each generated reference still names the file its spec was first written in
(its "specs_file", set at the end of this module): the references are stored by their sha256 in
the databases that used them, so their text does not change."""
from level2_ops import Ew, Linear2, Norm, Pool, Reduce, Reshape, Save, Softmax  # noqa: F401

SPECS = []

N01 = {"dist": "normal", "mean": 0, "std": 1}
GAMMA = {"dist": "normal", "mean": 1, "std": 0.5}  # norm weights: ones in PyTorch; varied here
BETA = {"dist": "normal", "mean": 0, "std": 0.5}   # norm biases: zeros in PyTorch; varied here

# dims sets per leading op (hyper-parameters are added from the default set)
SMALL = {
    "linear": {"B": 4, "IN": 40, "OUT": 24},
    "conv2d": {"B": 2, "CI": 3, "CO": 8, "H": 10, "W": 12},
    "conv3d": {"B": 2, "CI": 3, "CO": 8, "D": 6, "H": 8, "W": 10},
    "convT2d": {"B": 2, "CI": 3, "CO": 8, "H": 5, "W": 6},
    "convT3d": {"B": 2, "CI": 3, "CO": 8, "D": 3, "H": 4, "W": 5},
}
ALT = {
    "linear": [{"B": 5, "IN": 257, "OUT": 131}, {"B": 33, "IN": 1024, "OUT": 1000}],
    "conv2d": [{"B": 3, "CI": 5, "CO": 7, "H": 33, "W": 17}, {"B": 1, "CI": 16, "CO": 32, "H": 67, "W": 131}],
    "conv3d": [{"B": 3, "CI": 5, "CO": 7, "D": 9, "H": 13, "W": 11}, {"B": 1, "CI": 4, "CO": 16, "D": 6, "H": 34, "W": 67}],
    "convT2d": [{"B": 3, "CI": 5, "CO": 7, "H": 17, "W": 9}, {"B": 1, "CI": 16, "CO": 32, "H": 33, "W": 65}],
    "convT3d": [{"B": 3, "CI": 5, "CO": 7, "D": 5, "H": 7, "W": 9}, {"B": 1, "CI": 4, "CO": 16, "D": 3, "H": 9, "W": 17}],
}
LEAD_PHRASE = {
    "linear": "y = x @ weight^T + bias (torch.nn.Linear; x (B, IN), weight (OUT, IN), bias (OUT))",
    "conv2d": "2-D convolution as torch.nn.Conv2d (cross-correlation, stride S, zero padding P, with bias; weight (CO, CI, K, K)), output (B, CO, OH, OW), OH = (H + 2*P - K)/S + 1, OW likewise",
    "conv3d": "3-D convolution as torch.nn.Conv3d (cross-correlation, stride S, zero padding P, with bias; weight (CO, CI, K, K, K)), output (B, CO, OD, OH, OW), OD = (D + 2*P - K)/S + 1, OH and OW likewise",
    "convT2d": "2-D transposed convolution as torch.nn.ConvTranspose2d (stride S, padding P, output padding OP, with bias; weight (CI, CO, K, K)), output (B, CO, OH, OW), OH = (H - 1)*S - 2*P + K + OP, OW likewise",
    "convT3d": "3-D transposed convolution as torch.nn.ConvTranspose3d (stride S, padding P, output padding OP, with bias; weight (CI, CO, K, K, K)), output (B, CO, OD, OH, OW), OD = (D - 1)*S - 2*P + K + OP, OH and OW likewise",
}


def lead_setup(kind, bias=True, w_init=None):
    """Inputs, derived dims, output shape and torch line of the leading op."""
    if kind == "linear":
        ins = [{"name": "x", "dtype": "f32", "shape": ["B", "IN"], "init": N01},
               {"name": "weight", "dtype": "f32", "shape": ["OUT", "IN"], "init": w_init or {"dist": "uniform_fan_in", "fan_in": "IN"}}]
        if bias:
            ins.append({"name": "bias", "dtype": "f32", "shape": ["OUT"], "init": {"dist": "uniform_fan_in", "fan_in": "IN"}})
        return ins, {}, ["B", "OUT"], "x = F.linear(x, weight, %s)" % ("bias" if bias else "None"), "2*B*IN*OUT"
    nd = 3 if kind.endswith("3d") else 2
    sp = ["D", "H", "W"][3 - nd:]
    osp = ["O" + s for s in sp]
    xin = {"name": "x", "dtype": "f32", "shape": ["B", "CI"] + sp, "init": N01}
    if kind.startswith("convT"):
        fan = "CO*" + "*".join(["K"] * nd)
        w = {"name": "weight", "dtype": "f32", "shape": ["CI", "CO"] + ["K"] * nd, "init": {"dist": "uniform_fan_in", "fan_in": fan}}
        derived = {o: "(%s - 1)*S - 2*P + K + OP" % s for s, o in zip(sp, osp)}
        line = "x = F.conv_transpose%dd(x, weight, %s, stride=d['S'], padding=d['P'], output_padding=d['OP'])" % (nd, "bias" if bias else "None")
        flops = "2*B*CI*CO*%s*%s" % ("*".join(sp), "*".join(["K"] * nd))
    else:
        fan = "CI*" + "*".join(["K"] * nd)
        w = {"name": "weight", "dtype": "f32", "shape": ["CO", "CI"] + ["K"] * nd, "init": {"dist": "uniform_fan_in", "fan_in": fan}}
        derived = {o: "(%s + 2*P - K)/S + 1" % s for s, o in zip(sp, osp)}
        line = "x = F.conv%dd(x, weight, %s, stride=d['S'], padding=d['P'])" % (nd, "bias" if bias else "None")
        flops = "2*B*CO*%s*CI*%s" % ("*".join(osp), "*".join(["K"] * nd))
    ins = [xin, w]
    if bias:
        ins.append({"name": "bias", "dtype": "f32", "shape": ["CO"], "init": {"dist": "uniform_fan_in", "fan_in": fan}})
    return ins, derived, ["B", "CO"] + osp, line, flops


def torch_text(inputs, lines):
    args = ", ".join(t["name"] for t in inputs)
    body = "\n".join("        " + l for l in lines)
    return ("import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
            "class Model(nn.Module):\n    def __init__(self, **kwargs):\n        super().__init__()\n"
            "        self.d = kwargs  # dims and params by name\n\n"
            "    def forward(self, %s):\n        d = self.d\n%s\n        return x\n" % (args, body))


def problem(pid, name, title, kind, default, chain, torch, out_shape, extra_inputs=(), params=(),
            small=None, alt=None, bias=True, w_init=None, tol=None, notes="", degenerate=None,
            extra_derived=None, epi_flops="0"):
    """Adds a spec. default: KernelBench's dims (hyper-parameters included); small/alt: overrides
    of the size dims (hyper-parameters are copied from default unless given)."""
    inputs, derived, lead_out, lead_line, flops = lead_setup(kind, bias, w_init)
    if extra_derived:
        derived.update(extra_derived)
    hyper = {k: v for k, v in default.items() if k not in SMALL[kind]}
    sm = dict(hyper, **(small if small is not None else SMALL[kind]))
    alts = [dict(hyper, **a) for a in (alt if alt is not None else ALT[kind])]
    inputs += list(extra_inputs)
    ps = [{"name": n, "dtype": "f64", "value": v} for n, v in params]
    lead = {"kind": kind, "out_shape": lead_out, "bias": "bias" if bias else None}
    if kind == "linear":
        lead.update(M="B", K="IN", N="OUT", w="weight")
    steps = [op.phrase for op in chain if getattr(op, "phrase", None)]
    descr_inputs = []
    for t in inputs:
        init = t["init"]
        how = {"normal": "N(%g, %g)" % (init.get("mean", 0), init.get("std", 1)),
               "uniform_fan_in": "PyTorch's default init, uniform(-1/sqrt(%s), 1/sqrt(%s))" % (init.get("fan_in"), init.get("fan_in")),
               "constant": "all %g" % init.get("value", 0),
               "bernoulli": "a dropout mask: 0 with probability %g, else 1/(1-%g)" % (init.get("p", 0), init.get("p", 0))}.get(init["dist"], init["dist"])
        descr_inputs.append("%s (%s) ~ %s" % (t["name"], ", ".join(str(s) for s in t["shape"]), how))
    desc = ("KernelBench level 2, problem %d. float32 throughout. First %s. Then, in order: %s. "
            "Module parameters are inputs: %s. %s Output: y of shape (%s), float32."
            % (pid, LEAD_PHRASE[kind], "; ".join(steps), "; ".join(descr_inputs), notes,
               ", ".join(str(s) for s in out_shape)))
    if params:
        desc += " Params: %s." % ", ".join("%s = %g" % (n, v) for n, v in params)
    numel_out = "*".join(str(s) for s in out_shape)
    in_bytes = " + ".join("*".join(str(s) for s in t["shape"]) for t in inputs)
    tolerance = tol or {"atol": 1e-4, "rtol": 1e-4,
                        "why": "KernelBench's float32 tolerance. The leading op's outputs are O(0.5) "
                               "at PyTorch's init and N(0, 1) inputs; float32 accumulation in any order "
                               "errs by ~1e-6 and the epilogue's float32 math by a few ulps, well inside "
                               "1e-4, while TF32 or half-precision products (~3e-4 typical) and a "
                               "skipped or reordered epilogue step fail"}
    SPECS.append({
        "id": pid, "name": name, "title": title, "kb_name": KB_NAMES[pid - 1],
        "lead": lead, "chain": chain,
        "inputs": inputs,
        "outputs": [{"name": "y", "dtype": "f32", "shape": list(out_shape)}],
        "params": ps,
        "dims": {"default": default, "small": sm, "alt": alts},
        "derived": derived,
        "description": desc,
        "torch": torch_text(inputs, [lead_line] + list(torch)),
        "tolerance": tolerance,
        "bytes": "4*(%s + %s)" % (in_bytes, numel_out),
        "flops": "%s + %s" % (flops, epi_flops),
        "degenerate": degenerate,
    })


KB_NAMES = ['1_Conv2D_ReLU_BiasAdd', '2_ConvTranspose2d_BiasAdd_Clamp_Scaling_Clamp_Divide', '3_ConvTranspose3d_Sum_LayerNorm_AvgPool_GELU', '4_Conv2d_Mish_Mish', '5_ConvTranspose2d_Subtract_Tanh', '6_Conv3d_Softmax_MaxPool_MaxPool', '7_Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd', '8_Conv3d_Divide_Max_GlobalAvgPool_BiasAdd_Sum', '9_Matmul_Subtract_Multiply_ReLU', '10_ConvTranspose2d_MaxPool_Hardtanh_Mean_Tanh', '11_ConvTranspose2d_BatchNorm_Tanh_MaxPool_GroupNorm', '12_Gemm_Multiply_LeakyReLU', '13_ConvTranspose3d_Mean_Add_Softmax_Tanh_Scaling', '14_Gemm_Divide_Sum_Scaling', '15_ConvTranspose3d_BatchNorm_Subtract', '16_ConvTranspose2d_Mish_Add_Hardtanh_Scaling', '17_Conv2d_InstanceNorm_Divide', '18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp', '19_ConvTranspose2d_GELU_GroupNorm', '20_ConvTranspose3d_Sum_ResidualAdd_Multiply_ResidualAdd', '21_Conv2d_Add_Scale_Sigmoid_GroupNorm', '22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish', '23_Conv3d_GroupNorm_Mean', '24_Conv3d_Min_Softmax', '25_Conv2d_Min_Tanh_Tanh', '26_ConvTranspose3d_Add_HardSwish', '27_Conv3d_HardSwish_GroupNorm_Mean', '28_BMM_InstanceNorm_Sum_ResidualAdd_Multiply', '29_Matmul_Mish_Mish', '30_Gemm_GroupNorm_Hardtanh', '31_Conv2d_Min_Add_Multiply', '32_Conv2d_Scaling_Min', '33_Gemm_Scale_BatchNorm', '34_ConvTranspose3d_LayerNorm_GELU_Scaling', '35_Conv2d_Subtract_HardSwish_MaxPool_Mish', '36_ConvTranspose2d_Min_Sum_GELU_Add', '37_Matmul_Swish_Sum_GroupNorm', '38_ConvTranspose3d_AvgPool_Clamp_Softmax_Multiply', '39_Gemm_Scale_BatchNorm', '40_Matmul_Scaling_ResidualAdd', '41_Gemm_BatchNorm_GELU_ReLU', '42_ConvTranspose2d_GlobalAvgPool_BiasAdd_LogSumExp_Sum_Multiply', '43_Conv3d_Max_LogSumExp_ReLU', '44_ConvTranspose2d_Multiply_GlobalAvgPool_GlobalAvgPool_Mean', '45_Gemm_Sigmoid_LogSumExp', '46_Conv2d_Subtract_Tanh_Subtract_AvgPool', '47_Conv3d_Mish_Tanh', '48_Conv3d_Scaling_Tanh_Multiply_Sigmoid', '49_ConvTranspose3d_Softmax_Sigmoid', '50_ConvTranspose3d_Scaling_AvgPool_BiasAdd_Scaling', '51_Gemm_Subtract_GlobalAvgPool_LogSumExp_GELU_ResidualAdd', '52_Conv2d_Activation_BatchNorm', '53_Gemm_Scaling_Hardtanh_GELU', '54_Conv2d_Multiply_LeakyReLU_GELU', '55_Matmul_MaxPool_Sum_Scale', '56_Matmul_Sigmoid_Sum', '57_Conv2d_ReLU_HardSwish', '58_ConvTranspose3d_LogSumExp_HardSwish_Subtract_Clamp', '59_Matmul_Swish_Scaling', '60_ConvTranspose3d_Swish_GroupNorm_HardSwish', '61_ConvTranspose3d_ReLU_GroupNorm', '62_Matmul_GroupNorm_LeakyReLU_Sum', '63_Gemm_ReLU_Divide', '64_Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU', '65_Conv2d_AvgPool_Sigmoid_Sum', '66_Matmul_Dropout_Softmax', '67_Conv2d_GELU_GlobalAvgPool', '68_Matmul_Min_Subtract', '69_Conv2d_HardSwish_ReLU', '70_Gemm_Sigmoid_Scaling_ResidualAdd', '71_Conv2d_Divide_LeakyReLU', '72_ConvTranspose3d_BatchNorm_AvgPool_AvgPool', '73_Conv2d_BatchNorm_Scaling', '74_ConvTranspose3d_LeakyReLU_Multiply_LeakyReLU_Max', '75_Gemm_GroupNorm_Min_BiasAdd', '76_Gemm_Add_ReLU', '77_ConvTranspose3d_Scale_BatchNorm_GlobalAvgPool', '78_ConvTranspose3d_Max_Max_Sum', '79_Conv3d_Multiply_InstanceNorm_Clamp_Multiply_Max', '80_Gemm_Max_Subtract_GELU', '81_Gemm_Swish_Divide_Clamp_Tanh_Clamp', '82_Conv2d_Tanh_Scaling_BiasAdd_Max', '83_Conv3d_GroupNorm_Min_Clamp_Dropout', '84_Gemm_BatchNorm_Scaling_Softmax', '85_Conv2d_GroupNorm_Scale_MaxPool_Clamp', '86_Matmul_Divide_GELU', '87_Conv2d_Subtract_Subtract_Mish', '88_Gemm_GroupNorm_Swish_Multiply_Swish', '89_ConvTranspose3d_MaxPool_Softmax_Subtract_Swish_Max', '90_Conv3d_LeakyReLU_Sum_Clamp_GELU', '91_ConvTranspose2d_Softmax_BiasAdd_Scaling_Sigmoid', '92_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp', '93_ConvTranspose2d_Add_Min_GELU_Multiply', '94_Gemm_BiasAdd_Hardtanh_Mish_GroupNorm', '95_Matmul_Add_Swish_Tanh_GELU_Hardtanh', '96_ConvTranspose3d_Multiply_Max_GlobalAvgPool_Clamp', '97_Matmul_BatchNorm_BiasAdd_Divide_Swish', '98_Matmul_AvgPool_GELU_Scale_Max', '99_Matmul_GELU_Softmax', '100_ConvTranspose3d_Clamp_Min_Divide']

C2 = {"S": 1, "P": 0}   # Conv2d/3d with KernelBench's defaults (stride 1, no padding)
TRAIN_BN = ("BatchNorm runs in training mode as KernelBench runs it (it never calls eval()): "
            "batch statistics over every dim but the channel, biased variance; the running-stat "
            "update is a side effect and not part of the output.")


def bias_in(name, shape, init=N01):
    return {"name": name, "dtype": "f32", "shape": shape, "init": init}


def gn(name, groups, eps="eps"):
    return Norm("group", eps, name + "_weight", name + "_bias",
                "GroupNorm(%s groups of CO/%s channels, eps, affine %s_weight, %s_bias over CO)" % (groups, groups, name, name),
                groups=groups)


def affine(name, n):
    return [bias_in(name + "_weight", [n], GAMMA), bias_in(name + "_bias", [n], BETA)]


# ---------------------------------------------------------------- problems 1-20

problem(1, "conv2d_relu_bias_add", "Conv2d, ReLU, bias add", "conv2d",
        dict(B=128, CI=64, CO=128, H=128, W=128, K=3, **C2),
        [Ew("fmax(v, 0.0)", "ReLU"), Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1), broadcast over B, OH, OW")],
        ["x = torch.relu(x)", "x = x + extra_bias"], ["B", "CO", "OH", "OW"],
        extra_inputs=[bias_in("extra_bias", ["CO", 1, 1])])

problem(2, "conv_transpose2d_bias_add_clamp_scaling_clamp_divide", "ConvTranspose2d, bias add, clamp, scale, clamp, divide", "convT2d",
        dict(B=128, CI=64, CO=64, H=128, W=128, K=3, S=2, P=1, OP=1),
        [Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1)"), Ew("l2_clamp(v, 0.0, 1.0)", "clamp to [0, 1]"),
         Ew("v * scaling_factor", "multiply by scaling_factor"), Ew("l2_clamp(v, 0.0, 1.0)", "clamp to [0, 1]"),
         Ew("v / scaling_factor", "divide by scaling_factor")],
        ["x = x + extra_bias", "x = torch.clamp(x, min=0.0, max=1.0)", "x = x * d['scaling_factor']",
         "x = torch.clamp(x, min=0.0, max=1.0)", "x = x / d['scaling_factor']"], ["B", "CO", "OH", "OW"],
        extra_inputs=[bias_in("extra_bias", ["CO", 1, 1])], params=[("scaling_factor", 2.0)])

problem(3, "conv_transpose3d_sum_layer_norm_avg_pool_gelu", "ConvTranspose3d, add a scalar, LayerNorm over the last dim, AvgPool3d, GELU", "convT3d",
        dict(B=32, CI=32, CO=64, D=16, H=32, W=32, K=3, S=2, P=1, OP=1),
        [Ew("v + sum_weight", "add the scalar sum_weight"),
         Norm("layer", "eps", "norm_weight", "norm_bias", "LayerNorm over the LAST dim (OW, which equals CO in every dims set, as in KernelBench where normalized_shape = (out_channels,)), eps, affine norm_weight, norm_bias (CO)"),
         Pool("avg", ["2", "2", "2"], ["2", "2", "2"], "AvgPool3d(kernel 2, stride 2) over (OD, OH, OW)"),
         Ew("l2_gelu(v)", "GELU (exact, erf form)")],
        ["x = x + d['sum_weight']", "x = F.layer_norm(x, (x.shape[-1],), norm_weight, norm_bias, d['eps'])",
         "x = F.avg_pool3d(x, kernel_size=2)", "x = F.gelu(x)"],
        ["B", "CO", "OD/2", "OH/2", "OW/2"],
        extra_inputs=affine("norm", "CO"), params=[("sum_weight", 1.0), ("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 8, "D": 3, "H": 4, "W": 4},
        alt=[{"B": 3, "CI": 5, "CO": 10, "D": 3, "H": 7, "W": 5}, {"B": 1, "CI": 4, "CO": 16, "D": 2, "H": 5, "W": 8}],
        notes="sum_weight is a scalar nn.Parameter in KernelBench, fixed at 1.0: a param here.")

problem(4, "conv2d_mish_mish", "Conv2d, Mish, Mish", "conv2d",
        dict(B=64, CI=64, CO=128, H=256, W=256, K=3, **C2),
        [Ew("l2_mish(v)", "Mish (x * tanh(softplus(x)))"), Ew("l2_mish(v)", "Mish again")],
        ["x = F.mish(x)", "x = F.mish(x)"], ["B", "CO", "OH", "OW"])

problem(5, "conv_transpose2d_subtract_tanh", "ConvTranspose2d, subtract a bias, tanh", "convT2d",
        dict(B=32, CI=64, CO=64, H=256, W=256, K=4, S=2, P=1, OP=1),
        [Ew("v - {extra_bias}", "subtract extra_bias (CO, 1, 1)"), Ew("tanh(v)", "tanh")],
        ["x = x - extra_bias", "x = torch.tanh(x)"], ["B", "CO", "OH", "OW"],
        extra_inputs=[bias_in("extra_bias", ["CO", 1, 1])])

problem(6, "conv3d_softmax_max_pool_max_pool", "Conv3d, softmax over channels, two MaxPool3d", "conv3d",
        dict(B=128, CI=3, CO=16, D=16, H=32, W=32, K=3, **C2),
        [Softmax(1, 2, "softmax over the channel dim"),
         Pool("max", ["2", "2", "2"], ["2", "2", "2"], "MaxPool3d(kernel 2, stride 2)"),
         Pool("max", ["2", "2", "2"], ["2", "2", "2"], "MaxPool3d(kernel 2, stride 2) again")],
        ["x = torch.softmax(x, dim=1)", "x = F.max_pool3d(x, 2)", "x = F.max_pool3d(x, 2)"],
        ["B", "CO", "OD/2/2", "OH/2/2", "OW/2/2"],
        small={"B": 2, "CI": 3, "CO": 8, "D": 6, "H": 8, "W": 10},
        alt=[{"B": 3, "CI": 5, "CO": 7, "D": 9, "H": 13, "W": 11}, {"B": 1, "CI": 4, "CO": 16, "D": 6, "H": 34, "W": 67}],
        tol={"atol": 1e-5, "rtol": 1e-4, "why": "softmax outputs lie in (0, 1), about 1/CO = 0.06; float32 convolution and softmax err by ~1e-7 absolute; 1e-5 absolute and 1e-4 relative still fail TF32 products (~3e-4 relative on the logits, ~2e-5 on the probabilities), a softmax over the wrong dim and skipped pools"})

problem(7, "conv3d_relu_leaky_relu_gelu_sigmoid_bias_add", "Conv3d, ReLU, LeakyReLU, GELU, sigmoid, bias add", "conv3d",
        dict(B=64, CI=8, CO=32, D=32, H=64, W=64, K=3, **C2),
        [Ew("fmax(v, 0.0)", "ReLU"), Ew("l2_leaky(v, 0.01)", "LeakyReLU(0.01) (the identity after ReLU)"),
         Ew("l2_gelu(v)", "GELU (erf form)"), Ew("l2_sigmoid(v)", "sigmoid"),
         Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1, 1)")],
        ["x = torch.relu(x)", "x = F.leaky_relu(x, negative_slope=0.01)", "x = F.gelu(x)", "x = torch.sigmoid(x)", "x = x + extra_bias"],
        ["B", "CO", "OD", "OH", "OW"], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1, 1])])

problem(8, "conv3d_divide_max_global_avg_pool_bias_add_sum", "Conv3d, divide, MaxPool3d, global average pool, bias add, sum over channels", "conv3d",
        dict(B=128, CI=8, CO=16, D=16, H=64, W=64, K=3, **C2),
        [Ew("v / divisor", "divide by divisor"),
         Pool("max", ["2", "2", "2"], ["2", "2", "2"], "MaxPool3d(kernel 2, stride 2)"),
         Reduce(2, 5, "mean", True, "global average pool (AdaptiveAvgPool3d to 1x1x1)"),
         Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1, 1)"),
         Reduce(1, 2, "sum", True, "sum over the channel dim (dim 1, keepdim False in KernelBench's torch.sum; the result is (B, 1, 1, 1))")],
        ["x = x / d['divisor']", "x = F.max_pool3d(x, 2)", "x = F.adaptive_avg_pool3d(x, (1, 1, 1))", "x = x + extra_bias", "x = torch.sum(x, dim=1)"],
        ["B", 1, 1, 1], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1, 1])], params=[("divisor", 2.0)],
        small={"B": 2, "CI": 3, "CO": 8, "D": 6, "H": 8, "W": 10},
        alt=[{"B": 3, "CI": 5, "CO": 7, "D": 9, "H": 13, "W": 11}, {"B": 1, "CI": 4, "CO": 16, "D": 6, "H": 34, "W": 67}],
        tol={"atol": 1e-4, "rtol": 1e-4, "why": "outputs sum CO per-channel means of ~N(0.7, 0.3) maxima plus N(0, 1) biases, O(1..10); float32 pooling and a length-(OD/2*OH/2*OW/2) float32 mean err by ~1e-6 relative, inside 1e-4; TF32 products and a skipped max pool or bias fail"})

problem(9, "matmul_subtract_multiply_relu", "Linear, subtract, multiply, ReLU", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v - subtract_value", "subtract subtract_value"), Ew("v * multiply_value", "multiply by multiply_value"), Ew("fmax(v, 0.0)", "ReLU")],
        ["x = x - d['subtract_value']", "x = x * d['multiply_value']", "x = torch.relu(x)"], ["B", "OUT"],
        params=[("subtract_value", 2.0), ("multiply_value", 1.5)],
        degenerate="at PyTorch's init the Linear outputs have std ~0.58, so after subtracting 2 and the ReLU only ~0.03% of outputs are non-zero (3.5 sigma): an all-zero kernel fails only on those few elements")

problem(10, "conv_transpose2d_max_pool_hardtanh_mean_tanh", "ConvTranspose2d, MaxPool2d, Hardtanh, spatial mean, tanh", "convT2d",
        dict(B=128, CI=64, CO=64, H=256, W=256, K=3, S=1, P=1, OP=0),
        [Pool("max", ["2", "2"], ["2", "2"], "MaxPool2d(kernel 2, stride 2)"),
         Ew("l2_clamp(v, -1.0, 1.0)", "Hardtanh(-1, 1)"),
         Reduce(2, 4, "mean", True, "mean over (OH/2, OW/2), keepdim"),
         Ew("tanh(v)", "tanh")],
        ["x = F.max_pool2d(x, kernel_size=2, stride=2)", "x = F.hardtanh(x, min_val=-1.0, max_val=1.0)",
         "x = torch.mean(x, dim=(2, 3), keepdim=True)", "x = torch.tanh(x)"], ["B", "CO", 1, 1],
        notes="KernelBench's ConvTranspose2d here has no output padding (OP = 0).")

problem(11, "conv_transpose2d_batch_norm_tanh_max_pool_group_norm", "ConvTranspose2d, BatchNorm (training), tanh, MaxPool2d, GroupNorm", "convT2d",
        dict(B=512, CI=64, CO=128, H=32, W=32, K=5, S=1, P=1, OP=0, NG=8),
        [Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm2d in training mode (batch statistics over B, OH, OW, biased variance), eps, affine bn_weight, bn_bias (CO)"),
         Ew("tanh(v)", "tanh"),
         Pool("max", ["2", "2"], ["2", "2"], "MaxPool2d(kernel 2, stride 2)"),
         gn("gn", "NG")],
        ["x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])", "x = torch.tanh(x)",
         "x = F.max_pool2d(x, kernel_size=2, stride=2)", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])"],
        ["B", "CO", "OH/2", "OW/2"], extra_inputs=affine("bn", "CO") + affine("gn", "CO"), params=[("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 16, "H": 5, "W": 6},
        alt=[{"B": 3, "CI": 5, "CO": 24, "H": 17, "W": 9}, {"B": 1, "CI": 16, "CO": 32, "H": 33, "W": 65}],
        notes=TRAIN_BN + " KernelBench's file sets height = width = 32 last (its earlier 2048 is overwritten).")

problem(12, "gemm_multiply_leaky_relu", "Linear, multiply, LeakyReLU", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v * multiplier", "multiply by multiplier"), Ew("l2_leaky(v, negative_slope)", "LeakyReLU(negative_slope)")],
        ["x = x * d['multiplier']", "x = F.leaky_relu(x, d['negative_slope'])"], ["B", "OUT"],
        params=[("multiplier", 2.0), ("negative_slope", 0.1)])

problem(13, "conv_transpose3d_mean_add_softmax_tanh_scaling", "ConvTranspose3d, mean over depth, bias add, softmax over channels, tanh, scale", "convT3d",
        dict(B=16, CI=16, CO=64, D=32, H=128, W=128, K=3, S=1, P=1, OP=0),
        [Reduce(2, 3, "mean", True, "mean over the depth dim OD, keepdim"),
         Ew("v + {extra_bias}", "add extra_bias (1, CO, 1, 1, 1)"),
         Softmax(1, 2, "softmax over the channel dim"), Ew("tanh(v)", "tanh"), Ew("v * scaling_factor", "multiply by scaling_factor")],
        ["x = x.mean(dim=2, keepdim=True)", "x = x + extra_bias", "x = torch.softmax(x, dim=1)", "x = torch.tanh(x)", "x = x * d['scaling_factor']"],
        ["B", "CO", 1, "OH", "OW"], extra_inputs=[bias_in("extra_bias", [1, "CO", 1, 1, 1])], params=[("scaling_factor", 2.0)],
        tol={"atol": 1e-5, "rtol": 1e-4, "why": "outputs are 2*tanh of probabilities near 1/CO = 0.016; float32 math errs by ~1e-8 absolute; 1e-5 absolute still fails TF32 products, a softmax over the wrong dim and a skipped bias"},
        notes="KernelBench's ConvTranspose3d here has no output padding (OP = 0).")

problem(14, "gemm_divide_sum_scaling", "matmul (no bias), divide by 2, row sum, scale", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v / 2.0", "divide by 2"), Reduce(1, 2, "sum", True, "sum over OUT, keepdim"), Ew("v * scaling_factor", "multiply by scaling_factor")],
        ["x = x / 2", "x = torch.sum(x, dim=1, keepdim=True)", "x = x * d['scaling_factor']"], ["B", 1],
        bias=False, w_init=N01, params=[("scaling_factor", 1.5)],
        tol={"atol": 0.25, "rtol": 1e-4, "why": "the weight is N(0, 1) (torch.randn in KernelBench), so x @ weight^T has entries ~N(0, sqrt(IN)) = ~90 and each output sums OUT of them (magnitude ~6e3, some rows near 0 by cancellation); a float32 row sum of 8192 such terms errs by ~0.05 absolute whatever the size of the result (PyTorch's float32 GEMM and sum: up to 0.033 on the H100, 2.8x the earlier atol of 0.01), so atol 0.25; TF32 products err by ~5 absolute and fail, as does a sum over the wrong dim"},
        notes="The weight is a plain nn.Parameter drawn with torch.randn (OUT, IN): N(0, 1), no bias.")

problem(15, "conv_transpose3d_batch_norm_subtract", "ConvTranspose3d, BatchNorm (training), subtract the spatial mean", "convT3d",
        dict(B=16, CI=16, CO=32, D=16, H=32, W=32, K=3, S=2, P=1, OP=0),
        [Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm3d in training mode (batch statistics over B, OD, OH, OW, biased variance), eps, affine bn_weight, bn_bias (CO)"),
         Save("bn_out"), Reduce(2, 5, "mean", True, "the mean over (OD, OH, OW) per (b, c), keepdim"),
         Ew("{bn_out} - v", "subtract that mean from the BatchNorm output", out_shape=["B", "CO", "OD", "OH", "OW"])],
        ["x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])",
         "x = x - torch.mean(x, dim=(2, 3, 4), keepdim=True)"],
        ["B", "CO", "OD", "OH", "OW"], extra_inputs=affine("bn", "CO"), params=[("eps", 1e-5)],
        notes=TRAIN_BN + " KernelBench's ConvTranspose3d here has no output padding (OP = 0).")

problem(16, "conv_transpose2d_mish_add_hardtanh_scaling", "ConvTranspose2d, Mish, add, Hardtanh, scale", "convT2d",
        dict(B=128, CI=64, CO=64, H=128, W=128, K=3, S=2, P=1, OP=1),
        [Ew("l2_mish(v)", "Mish"), Ew("v + add_value", "add add_value"), Ew("l2_clamp(v, -1.0, 1.0)", "Hardtanh(-1, 1)"), Ew("v * scale", "multiply by scale")],
        ["x = F.mish(x)", "x = x + d['add_value']", "x = F.hardtanh(x, min_val=-1, max_val=1)", "x = x * d['scale']"],
        ["B", "CO", "OH", "OW"], params=[("add_value", 0.5), ("scale", 2.0)])

problem(17, "conv2d_instance_norm_divide", "Conv2d, InstanceNorm, divide", "conv2d",
        dict(B=128, CI=64, CO=128, H=128, W=128, K=3, **C2),
        [Norm("instance", "eps", None, None, "InstanceNorm2d (per (b, c) over OH, OW, biased variance, eps, no affine)"),
         Ew("v / divide_by", "divide by divide_by")],
        ["x = F.instance_norm(x, eps=d['eps'])", "x = x / d['divide_by']"], ["B", "CO", "OH", "OW"],
        params=[("eps", 1e-5), ("divide_by", 2.0)])

problem(18, "matmul_sum_max_avg_pool_log_sum_exp_log_sum_exp", "Linear, row sum, then max, mean and two logsumexp over a dim of size 1", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Reduce(1, 2, "sum", True, "sum over OUT, keepdim (B, 1)"),
         Ew("v", "max over dim 1 (size 1: the identity)"), Ew("v", "mean over dim 1 (identity)"),
         Ew("v", "logsumexp over dim 1 (identity: log(exp(v)) = v)"), Ew("v", "logsumexp over dim 1 again (identity)")],
        ["x = torch.sum(x, dim=1, keepdim=True)", "x = torch.max(x, dim=1, keepdim=True)[0]", "x = torch.mean(x, dim=1, keepdim=True)",
         "x = torch.logsumexp(x, dim=1, keepdim=True)", "x = torch.logsumexp(x, dim=1, keepdim=True)"], ["B", 1],
        tol={"atol": 1e-3, "rtol": 1e-4, "why": "each output sums OUT Linear outputs of std ~0.58 (magnitude ~50); float32 GEMM plus a float32 sum over 8192 values err by ~1e-5 absolute; 1e-3 absolute rejects TF32 products (~1e-2 on the sum) and a sum over the wrong dim"})

problem(19, "conv_transpose2d_gelu_group_norm", "ConvTranspose2d, GELU, GroupNorm", "convT2d",
        dict(B=128, CI=64, CO=64, H=256, W=256, K=3, S=1, P=0, OP=0, NG=8),
        [Ew("l2_gelu(v)", "GELU (erf form)"), gn("gn", "NG")],
        ["x = F.gelu(x)", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])"], ["B", "CO", "OH", "OW"],
        extra_inputs=affine("gn", "CO"), params=[("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 16, "H": 5, "W": 6},
        alt=[{"B": 3, "CI": 5, "CO": 24, "H": 17, "W": 9}, {"B": 1, "CI": 16, "CO": 32, "H": 33, "W": 65}])

problem(20, "conv_transpose3d_sum_residual_add_multiply_residual_add", "ConvTranspose3d, bias add, residual add, multiply, residual add", "convT3d",
        dict(B=16, CI=32, CO=64, D=16, H=32, W=32, K=3, S=2, P=1, OP=1),
        [Save("orig"), Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1, 1)"), Ew("v + {orig}", "add the ConvTranspose3d output (orig)"),
         Ew("v * {orig}", "multiply by orig"), Ew("v + {orig}", "add orig")],
        ["orig = x.clone()", "x = x + extra_bias", "x = x + orig", "x = x * orig", "x = x + orig"],
        ["B", "CO", "OD", "OH", "OW"], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1, 1])])

# ---------------------------------------------------------------- problems 21-40

problem(21, "conv2d_add_scale_sigmoid_group_norm", "Conv2d, bias add, scale, sigmoid, GroupNorm", "conv2d",
        dict(B=128, CI=8, CO=32, H=256, W=256, K=3, NG=8, **C2),
        [Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1)"), Ew("v * {scale}", "multiply by scale (CO, 1, 1)"),
         Ew("l2_sigmoid(v)", "sigmoid"), gn("gn", "NG")],
        ["x = x + extra_bias", "x = x * scale", "x = torch.sigmoid(x)", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])"],
        ["B", "CO", "OH", "OW"],
        extra_inputs=[bias_in("extra_bias", ["CO", 1, 1]), bias_in("scale", ["CO", 1, 1])] + affine("gn", "CO"), params=[("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 16, "H": 10, "W": 12},
        alt=[{"B": 3, "CI": 5, "CO": 24, "H": 33, "W": 17}, {"B": 1, "CI": 16, "CO": 32, "H": 67, "W": 131}])

problem(22, "matmul_scale_residual_add_clamp_log_sum_exp_mish", "Linear, scale, x + x, clamp, logsumexp, x * mish(x)", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v * scale_factor", "multiply by scale_factor"), Ew("v + v", "add the result to itself"),
         Ew("l2_clamp(v, clamp_min, clamp_max)", "clamp to [clamp_min, clamp_max]"),
         Reduce(1, 2, "lse", True, "logsumexp over OUT, keepdim (B, 1)"), Ew("v * l2_mish(v)", "x * mish(x)")],
        ["x = x * d['scale_factor']", "x = x + x", "x = torch.clamp(x, d['clamp_min'], d['clamp_max'])",
         "x = torch.logsumexp(x, dim=1, keepdim=True)", "x = x * F.mish(x)"], ["B", 1],
        params=[("scale_factor", 2.0), ("clamp_min", -10.0), ("clamp_max", 10.0)])

problem(23, "conv3d_group_norm_mean", "Conv3d, GroupNorm, mean over all but the batch", "conv3d",
        dict(B=128, CI=3, CO=24, D=24, H=32, W=32, K=3, NG=8, **C2),
        [gn("gn", "NG"), Reduce(1, 5, "mean", False, "mean over (CO, OD, OH, OW): one value per batch element")],
        ["x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])", "x = x.mean(dim=[1, 2, 3, 4])"], ["B"],
        extra_inputs=affine("gn", "CO"), params=[("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 16, "D": 6, "H": 8, "W": 10},
        alt=[{"B": 3, "CI": 5, "CO": 24, "D": 9, "H": 13, "W": 11}, {"B": 1, "CI": 4, "CO": 32, "D": 6, "H": 34, "W": 67}],
        notes="With PyTorch's GroupNorm init (weight ones, bias zeros) the output would be zero up to rounding; gn_weight and gn_bias are drawn N(1, 0.5) and N(0, 0.5) so it is not.")

problem(24, "conv3d_min_softmax", "Conv3d, min over depth, softmax over channels", "conv3d",
        dict(B=128, CI=3, CO=24, D=24, H=32, W=32, K=3, **C2),
        [Reduce(2, 3, "min", False, "min over the depth dim OD (no keepdim): (B, CO, OH, OW)"), Softmax(1, 2, "softmax over the channel dim")],
        ["x = torch.min(x, dim=2)[0]", "x = torch.softmax(x, dim=1)"], ["B", "CO", "OH", "OW"],
        tol={"atol": 1e-5, "rtol": 1e-4, "why": "softmax outputs near 1/CO = 0.04; float32 math errs by ~1e-8 absolute; 1e-5 absolute still fails TF32 products, a min over the wrong dim and a softmax over the wrong dim"})

problem(25, "conv2d_min_tanh_tanh", "Conv2d, min over channels, tanh, tanh", "conv2d",
        dict(B=128, CI=16, CO=64, H=256, W=256, K=3, **C2),
        [Reduce(1, 2, "min", True, "min over the channel dim, keepdim (B, 1, OH, OW)"), Ew("tanh(v)", "tanh"), Ew("tanh(v)", "tanh again")],
        ["x = torch.min(x, dim=1, keepdim=True)[0]", "x = torch.tanh(x)", "x = torch.tanh(x)"], ["B", 1, "OH", "OW"])

problem(26, "conv_transpose3d_add_hard_swish", "ConvTranspose3d, add an input, x * hardswish(x)", "convT3d",
        dict(B=128, CI=32, CO=64, D=16, H=16, W=16, K=3, S=2, P=1, OP=1),
        [Ew("v + {add_input}", "add the input add_input (B, CO, OD, OH, OW)"), Ew("v * l2_hardswish(v)", "x * hardswish(x)")],
        ["x = x + add_input", "x = x * F.hardswish(x)"], ["B", "CO", "OD", "OH", "OW"],
        extra_inputs=[bias_in("add_input", ["B", "CO", "OD", "OH", "OW"])],
        notes="KernelBench's module also creates a bias parameter that forward never uses; it is left out. add_input is the second forward input.")

problem(27, "conv3d_hard_swish_group_norm_mean", "Conv3d, hardswish, GroupNorm, spatial mean", "conv3d",
        dict(B=1024, CI=3, CO=16, D=16, H=32, W=32, K=4, NG=4, **C2),
        [Ew("l2_hardswish(v)", "hardswish"), gn("gn", "NG"), Reduce(2, 5, "mean", False, "mean over (OD, OH, OW): (B, CO)")],
        ["x = F.hardswish(x)", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])", "x = torch.mean(x, dim=[2, 3, 4])"], ["B", "CO"],
        extra_inputs=affine("gn", "CO"), params=[("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 8, "D": 6, "H": 8, "W": 10},
        alt=[{"B": 3, "CI": 5, "CO": 12, "D": 9, "H": 13, "W": 11}, {"B": 1, "CI": 4, "CO": 16, "D": 6, "H": 34, "W": 67}],
        notes="The per-channel spatial mean of a GroupNorm output is bias + weight * (channel mean - group mean)/std: non-trivial because the channels of a group differ.")

problem(28, "bmm_instance_norm_sum_residual_add_multiply", "Linear, instance norm over the features, add y, multiply by y", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Norm("layer", "eps", None, None, "InstanceNorm2d applied to x viewed as (B, 1, 1, OUT): per row, over the OUT features, biased variance, eps, no affine"),
         Ew("v + {y_in}", "add the input y_in (B, OUT)"), Ew("v * {y_in}", "multiply by y_in")],
        ["x = F.instance_norm(x.unsqueeze(1).unsqueeze(1), eps=d['eps']).squeeze(1).squeeze(1)", "x = x + y_in", "x = x * y_in"], ["B", "OUT"],
        extra_inputs=[bias_in("y_in", ["B", "OUT"])], params=[("eps", 1e-5)],
        notes="y_in is KernelBench's second forward input y.")

problem(29, "matmul_mish_mish", "Linear, Mish, Mish", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("l2_mish(v)", "Mish"), Ew("l2_mish(v)", "Mish again")],
        ["x = F.mish(x)", "x = F.mish(x)"], ["B", "OUT"])

problem(30, "gemm_group_norm_hardtanh", "Linear, GroupNorm, Hardtanh", "linear",
        dict(B=1024, IN=8192, OUT=8192, NG=16),
        [Norm("group", "eps", "gn_weight", "gn_bias", "GroupNorm(NG groups of OUT/NG features, eps, affine gn_weight, gn_bias (OUT))", groups="NG"),
         Ew("l2_clamp(v, hardtanh_min, hardtanh_max)", "Hardtanh(hardtanh_min, hardtanh_max)")],
        ["x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])", "x = F.hardtanh(x, d['hardtanh_min'], d['hardtanh_max'])"], ["B", "OUT"],
        extra_inputs=affine("gn", "OUT"), params=[("eps", 1e-5), ("hardtanh_min", -2.0), ("hardtanh_max", 2.0)],
        small={"B": 4, "IN": 40, "OUT": 32}, alt=[{"B": 5, "IN": 257, "OUT": 48}, {"B": 33, "IN": 1024, "OUT": 160}])

problem(31, "conv2d_min_add_multiply", "Conv2d, min with a constant, bias add, scale", "conv2d",
        dict(B=128, CI=64, CO=128, H=128, W=128, K=3, **C2),
        [Ew("fmin(v, constant_value)", "min(x, constant_value) elementwise"), Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1)"),
         Ew("v * scaling_factor", "multiply by scaling_factor")],
        ["x = torch.min(x, torch.tensor(d['constant_value'], dtype=x.dtype, device=x.device))", "x = x + extra_bias", "x = x * d['scaling_factor']"],
        ["B", "CO", "OH", "OW"], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1])], params=[("constant_value", 0.5), ("scaling_factor", 2.0)])

problem(32, "conv2d_scaling_min", "Conv2d, scale, min over channels", "conv2d",
        dict(B=64, CI=64, CO=128, H=256, W=256, K=3, **C2),
        [Ew("v * scale_factor", "multiply by scale_factor"), Reduce(1, 2, "min", True, "min over the channel dim, keepdim (B, 1, OH, OW)")],
        ["x = x * d['scale_factor']", "x = torch.min(x, dim=1, keepdim=True)[0]"], ["B", 1, "OH", "OW"], params=[("scale_factor", 2.0)])

problem(33, "gemm_scale_batch_norm", "Linear, scale, BatchNorm1d (training)", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("v * {scale}", "multiply by scale (OUT)"),
         Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm1d in training mode (statistics over the batch, biased variance), eps, affine bn_weight, bn_bias (OUT)")],
        ["x = x * scale", "x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])"], ["B", "OUT"],
        extra_inputs=[bias_in("scale", ["OUT"])] + affine("bn", "OUT"), params=[("eps", 1e-5)], notes=TRAIN_BN)

problem(34, "conv_transpose3d_layer_norm_gelu_scaling", "ConvTranspose3d, LayerNorm over the last dim, GELU, scale", "convT3d",
        dict(B=32, CI=32, CO=64, D=16, H=32, W=32, K=4, S=2, P=1, OP=0),
        [Norm("layer", "eps", "ln_weight", "ln_bias", "LayerNorm over the LAST dim (OW, which equals CO in every dims set, as in KernelBench where normalized_shape = (out_channels,)), eps, affine ln_weight, ln_bias (CO)"),
         Ew("l2_gelu(v)", "GELU (erf form)"), Ew("v * scaling_factor", "multiply by scaling_factor")],
        ["x = F.layer_norm(x, (x.shape[-1],), ln_weight, ln_bias, d['eps'])", "x = F.gelu(x)", "x = x * d['scaling_factor']"],
        ["B", "CO", "OD", "OH", "OW"], extra_inputs=affine("ln", "CO"), params=[("eps", 1e-5), ("scaling_factor", 1.0)],
        small={"B": 2, "CI": 3, "CO": 8, "D": 3, "H": 4, "W": 4},
        alt=[{"B": 3, "CI": 5, "CO": 10, "D": 3, "H": 7, "W": 5}, {"B": 1, "CI": 4, "CO": 16, "D": 2, "H": 5, "W": 8}],
        notes="KernelBench's ConvTranspose3d here has no output padding (OP = 0).")

problem(35, "conv2d_subtract_hard_swish_max_pool_mish", "Conv2d, subtract, hardswish, MaxPool2d, Mish", "conv2d",
        dict(B=128, CI=64, CO=128, H=128, W=128, K=3, **C2),
        [Ew("v - subtract_value", "subtract subtract_value"), Ew("l2_hardswish(v)", "hardswish"),
         Pool("max", ["2", "2"], ["2", "2"], "MaxPool2d(kernel 2, stride 2)"), Ew("l2_mish(v)", "Mish")],
        ["x = x - d['subtract_value']", "x = F.hardswish(x)", "x = F.max_pool2d(x, 2)", "x = F.mish(x)"],
        ["B", "CO", "OH/2", "OW/2"], params=[("subtract_value", 0.5)])

problem(36, "conv_transpose2d_min_sum_gelu_add", "ConvTranspose2d, min over channels, sum over height, GELU, bias add", "convT2d",
        dict(B=16, CI=64, CO=128, H=128, W=128, K=3, S=2, P=1, OP=1),
        [Reduce(1, 2, "min", True, "min over the channel dim, keepdim (B, 1, OH, OW)"),
         Reduce(2, 3, "sum", True, "sum over the height dim, keepdim (B, 1, 1, OW)"),
         Ew("l2_gelu(v)", "GELU (erf form)"), Ew("v + {extra_bias}", "add extra_bias (1, 1, 1)")],
        ["x = torch.min(x, dim=1, keepdim=True)[0]", "x = torch.sum(x, dim=2, keepdim=True)", "x = F.gelu(x)", "x = x + extra_bias"],
        ["B", 1, 1, "OW"], extra_inputs=[bias_in("extra_bias", [1, 1, 1])],
        tol={"atol": 1e-4, "rtol": 1e-4, "why": "outputs are GELU of sums of OH channel minima (magnitude ~OH); float32 math errs by ~1e-6 relative, inside 1e-4; TF32 products and a min or sum over the wrong dim fail"})

problem(37, "matmul_swish_sum_group_norm", "Linear, swish, bias add, GroupNorm", "linear",
        dict(B=32768, IN=1024, OUT=4096, NG=64),
        [Ew("v * l2_sigmoid(v)", "swish (x * sigmoid(x))"), Ew("v + {extra_bias}", "add extra_bias (OUT)"),
         Norm("group", "eps", "gn_weight", "gn_bias", "GroupNorm(NG groups of OUT/NG features, eps, affine gn_weight, gn_bias (OUT))", groups="NG")],
        ["x = torch.sigmoid(x) * x", "x = x + extra_bias", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])"], ["B", "OUT"],
        extra_inputs=[bias_in("extra_bias", ["OUT"])] + affine("gn", "OUT"), params=[("eps", 1e-5)],
        small={"B": 4, "IN": 40, "OUT": 128}, alt=[{"B": 5, "IN": 257, "OUT": 192}, {"B": 33, "IN": 1024, "OUT": 640}])

problem(39, "gemm_scale_batch_norm", "Linear, scale, BatchNorm1d (training), batch 16384", "linear",
        dict(B=16384, IN=4096, OUT=4096),
        [Ew("v * {scale}", "multiply by scale (OUT)"),
         Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm1d in training mode (statistics over the batch, biased variance), eps, affine bn_weight, bn_bias (OUT)")],
        ["x = x * scale", "x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])"], ["B", "OUT"],
        extra_inputs=[bias_in("scale", ["OUT"])] + affine("bn", "OUT"), params=[("eps", 1e-5)], notes=TRAIN_BN)

problem(40, "matmul_scaling_residual_add", "Linear, scale, residual add", "linear",
        dict(B=16384, IN=4096, OUT=4096),
        [Save("orig"), Ew("v * scaling_factor", "multiply by scaling_factor"), Ew("v + {orig}", "add the Linear output (orig)")],
        ["orig = x.clone()", "x = x * d['scaling_factor']", "x = x + orig"], ["B", "OUT"], params=[("scaling_factor", 0.5)],
        notes="The result is (1 + scaling_factor) times the Linear output.")

# ---------------------------------------------------------------- problems 41-

problem(41, "gemm_batch_norm_gelu_relu", "Linear, BatchNorm1d (training), GELU, ReLU", "linear",
        dict(B=16384, IN=4096, OUT=4096),
        [Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm1d in training mode (statistics over the batch, biased variance), eps, affine bn_weight, bn_bias (OUT)"),
         Ew("l2_gelu(v)", "GELU (erf form)"), Ew("fmax(v, 0.0)", "ReLU")],
        ["x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])", "x = F.gelu(x)", "x = torch.relu(x)"],
        ["B", "OUT"], extra_inputs=affine("bn", "OUT"), params=[("eps", 1e-5)], notes=TRAIN_BN)

problem(42, "conv_transpose2d_global_avg_pool_bias_add_log_sum_exp_sum_multiply", "ConvTranspose2d, global average pool, bias add, logsumexp over channels, sum, multiply", "convT2d",
        dict(B=16, CI=64, CO=128, H=512, W=512, K=3, S=1, P=0, OP=0),
        [Reduce(2, 4, "mean", True, "mean over (OH, OW), keepdim (B, CO, 1, 1)"), Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1)"),
         Reduce(1, 2, "lse", True, "logsumexp over the channel dim, keepdim (B, 1, 1, 1)"),
         Reduce(2, 4, "sum", False, "sum over the two trailing size-1 dims: (B, 1)"), Ew("v * 10.0", "multiply by 10")],
        ["x = torch.mean(x, dim=(2, 3), keepdim=True)", "x = x + extra_bias", "x = torch.logsumexp(x, dim=1, keepdim=True)",
         "x = torch.sum(x, dim=(2, 3))", "x = x * 10.0"], ["B", 1], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1])],
        tol={"atol": 1e-4, "rtol": 1e-4, "why": "outputs are 10 * logsumexp over CO of spatial means plus N(0, 1) biases, magnitude ~50; a float32 mean over OH*OW = 264196 values errs by ~1e-6 relative when blocked, inside 1e-4; TF32 products, a skipped bias and a reduction over the wrong dim fail"})

problem(43, "conv3d_max_log_sum_exp_relu", "Conv3d (padded), MaxPool3d, logsumexp over channels, ReLU", "conv3d",
        dict(B=4, CI=32, CO=64, D=32, H=128, W=128, K=3, S=1, P=1),
        [Pool("max", ["2", "2", "2"], ["2", "2", "2"], "MaxPool3d(kernel 2, stride 2)"),
         Reduce(1, 2, "lse", True, "logsumexp over the channel dim, keepdim (B, 1, OD/2, OH/2, OW/2)"), Ew("fmax(v, 0.0)", "ReLU")],
        ["x = F.max_pool3d(x, kernel_size=2, stride=2)", "x = torch.logsumexp(x, dim=1, keepdim=True)", "x = torch.relu(x)"],
        ["B", 1, "OD/2", "OH/2", "OW/2"])

problem(44, "conv_transpose2d_multiply_global_avg_pool_global_avg_pool_mean", "ConvTranspose2d, multiply, two global average pools", "convT2d",
        dict(B=16, CI=64, CO=128, H=128, W=128, K=3, S=2, P=1, OP=1),
        [Ew("v * multiplier", "multiply by multiplier"), Reduce(2, 4, "mean", True, "mean over (OH, OW), keepdim (B, CO, 1, 1)"),
         Ew("v", "mean over the two size-1 dims again (the identity)")],
        ["x = x * d['multiplier']", "x = torch.mean(x, dim=[2, 3], keepdim=True)", "x = torch.mean(x, dim=[2, 3], keepdim=True)"],
        ["B", "CO", 1, 1], params=[("multiplier", 0.5)],
        tol={"atol": 1e-5, "rtol": 1e-4, "why": "outputs are spatial means, ~0.5 * bias (|bias| < 1/sqrt(CO*K*K) = 0.03) plus averaging noise of ~1e-3: 1e-5 absolute keeps a zero output and a skipped bias failing; float32 means over OH*OW = 65536 values err by ~1e-8 absolute"})

problem(45, "gemm_sigmoid_log_sum_exp", "Linear, sigmoid, Linear, logsumexp", "linear",
        dict(B=16384, IN=2048, OUT=4096, O2=1024),
        [Ew("l2_sigmoid(v)", "sigmoid (rounded to float32, as the second Linear reads a float32 tensor)"),
         Linear2("weight2", "bias2", "O2", "a second Linear: x @ weight2^T + bias2 (weight2 (O2, OUT), bias2 (O2))"),
         Reduce(1, 2, "lse", False, "logsumexp over O2: (B)")],
        ["x = torch.sigmoid(x)", "x = F.linear(x, weight2, bias2)", "x = torch.logsumexp(x, dim=1)"], ["B"],
        extra_inputs=[{"name": "weight2", "dtype": "f32", "shape": ["O2", "OUT"], "init": {"dist": "uniform_fan_in", "fan_in": "OUT"}},
                      {"name": "bias2", "dtype": "f32", "shape": ["O2"], "init": {"dist": "uniform_fan_in", "fan_in": "OUT"}}],
        small={"B": 4, "IN": 40, "OUT": 24, "O2": 12},
        alt=[{"B": 5, "IN": 257, "OUT": 131, "O2": 67}, {"B": 33, "IN": 1024, "OUT": 1000, "O2": 100}],
        epi_flops="2*B*OUT*O2")

# ================================================================================================
# Problems 038 and 046-072 (first written as level2_specs_b.py).
# They use problem() and the helpers above. Two additions used here: a
# spec's lead may set "blocked" (Conv3d by shared/conv3d_blocked_ref.cuh, ~10x the direct one),
# and a spec may have "pre": pools on x before the leading op (038), with lead "in_sp" naming the
# pooled spatial dims the leading op reads.
_B0 = len(SPECS)  # the first spec of this section


def tol(atol, rtol, why):
    return {"atol": atol, "rtol": rtol, "why": why}


def last():
    return SPECS[-1]


# torch.ones parameters: 1 in the first check; the checks that vary constants draw them N(1, 0.5)
ONES = {"dist": "constant", "value": 1, "vary": {"dist": "normal", "mean": 1, "std": 0.5}}
CONV3D_SMALL = {"B": 2, "CI": 3, "CO": 8, "D": 6, "H": 8, "W": 10}
CONV3D_ALT = [{"B": 3, "CI": 5, "CO": 7, "D": 9, "H": 13, "W": 11}, {"B": 1, "CI": 4, "CO": 16, "D": 6, "H": 34, "W": 67}]

# ---------------------------------------------------------------- problem 38

problem(38, "conv_transpose3d_avg_pool_clamp_softmax_multiply", "AvgPool3d, ConvTranspose3d, clamp, softmax over the spatial dims, multiply", "convT3d",
        dict(B=32, CI=32, CO=64, D=32, H=64, W=64, K=3, S=2, P=1, OP=1),
        [Ew("l2_clamp(v, clamp_min, clamp_max)", "clamp to [clamp_min, clamp_max]"),
         Softmax(2, 5, "softmax over the flattened spatial dims OD*OH*OW of each (b, c) (KernelBench's view(b, c, -1), softmax(dim=2), view back)"),
         Ew("v * {scale}", "multiply by scale (1, CO, 1, 1, 1)")],
        ["x = torch.clamp(x, min=d['clamp_min'], max=d['clamp_max'])",
         "x = torch.softmax(x.flatten(2), dim=2).view_as(x)", "x = x * scale"],
        ["B", "CO", "OD", "OH", "OW"],
        extra_inputs=[bias_in("scale", [1, "CO", 1, 1, 1], ONES)], params=[("clamp_min", 0.0), ("clamp_max", 1.0)],
        small={"B": 2, "CI": 3, "CO": 8, "D": 3, "H": 4, "W": 5},
        alt=[{"B": 3, "CI": 5, "CO": 7, "D": 5, "H": 7, "W": 9}, {"B": 1, "CI": 4, "CO": 16, "D": 4, "H": 9, "W": 17}],
        tol=tol(1e-9, 1e-4, "each (b, c) softmax spreads over OD*OH*OW = 131072 positions, so outputs are ~7.6e-6 and differ from 1/131072 by a few percent (the clamped conv outputs lie in [0, ~0.2]): atol must sit far below them or an all-zero output passes (it would at KernelBench's 1e-4); float32 math errs by ~1e-6 relative, inside 1e-4 relative, while a skipped clamp, a skipped bias or a softmax over the wrong dims fail"),
        notes="KernelBench applies the AvgPool3d to the input BEFORE the transposed convolution; scale is torch.ones in KernelBench (a constant 1 here, so multiplying by it is exact).")
s = last()
s["pre"] = [Pool("avg", ["2", "2", "2"], ["2", "2", "2"], "AvgPool3d(kernel 2, stride 2) on x")]
s["lead"]["in_sp"] = ["PD", "PH", "PW"]
s["derived"] = {"PD": "D/2", "PH": "H/2", "PW": "W/2", "OD": "(D/2 - 1)*S - 2*P + K + OP",
                "OH": "(H/2 - 1)*S - 2*P + K + OP", "OW": "(W/2 - 1)*S - 2*P + K + OP"}
s["torch"] = torch_text(s["inputs"], ["x = F.avg_pool3d(x, kernel_size=2)",
                                      "x = F.conv_transpose3d(x, weight, bias, stride=d['S'], padding=d['P'], output_padding=d['OP'])",
                                      "x = torch.clamp(x, min=d['clamp_min'], max=d['clamp_max'])",
                                      "x = torch.softmax(x.flatten(2), dim=2).view_as(x)", "x = x * scale"])
for a, b in (("First 3-D transposed", "First AvgPool3d(kernel 2, stride 2, floor) on x, giving (B, CI, PD, PH, PW) with PD = D/2, PH = H/2, PW = W/2; then a 3-D transposed"),
             ("OD = (D - 1)*S", "OD = (PD - 1)*S")):
    assert s["description"].count(a) == 1, a
    s["description"] = s["description"].replace(a, b, 1)
s["flops"] = "2*B*CI*CO*(D/2)*(H/2)*(W/2)*K*K*K + B*CI*D*H*W"

# ---------------------------------------------------------------- problems 46-57

problem(46, "conv2d_subtract_tanh_subtract_avg_pool", "Conv2d, subtract, tanh, subtract, AvgPool2d", "conv2d",
        dict(B=128, CI=64, CO=128, H=128, W=128, K=3, **C2),
        [Ew("v - subtract1_value", "subtract subtract1_value"), Ew("tanh(v)", "tanh"), Ew("v - subtract2_value", "subtract subtract2_value"),
         Pool("avg", ["2", "2"], ["2", "2"], "AvgPool2d(kernel 2, stride 2)")],
        ["x = x - d['subtract1_value']", "x = torch.tanh(x)", "x = x - d['subtract2_value']", "x = F.avg_pool2d(x, kernel_size=2)"],
        ["B", "CO", "OH/2", "OW/2"], params=[("subtract1_value", 0.5), ("subtract2_value", 0.2)],
        tol=tol(1e-4, 1e-4, "outputs are means of 4 tanh values minus 0.2, O(0.5); float32 math errs by ~1e-7, well inside 1e-4; a skipped subtraction (0.2 or a 0.5 shift before the tanh), a max in place of the mean and a skipped pool fail"))

problem(47, "conv3d_mish_tanh", "Conv3d, Mish, tanh", "conv3d",
        dict(B=16, CI=32, CO=64, D=32, H=64, W=64, K=3, **C2),
        [Ew("l2_mish(v)", "Mish (x * tanh(softplus(x)))"), Ew("tanh(v)", "tanh")],
        ["x = F.mish(x)", "x = torch.tanh(x)"], ["B", "CO", "OD", "OH", "OW"],
        small=CONV3D_SMALL, alt=CONV3D_ALT)
last()["lead"]["blocked"] = True

problem(48, "conv3d_scaling_tanh_multiply_sigmoid", "Conv3d, multiply by a per-channel scale, tanh, multiply by a per-channel bias, sigmoid", "conv3d",
        dict(B=128, CI=3, CO=16, D=16, H=64, W=64, K=3, **C2),
        [Ew("v * {scaling_factor}", "multiply by scaling_factor (CO, 1, 1, 1)"), Ew("tanh(v)", "tanh"),
         Ew("v * {extra_bias}", "multiply by extra_bias (CO, 1, 1, 1)"), Ew("l2_sigmoid(v)", "sigmoid")],
        ["x = x * scaling_factor", "x = torch.tanh(x)", "x = x * extra_bias", "x = torch.sigmoid(x)"], ["B", "CO", "OD", "OH", "OW"],
        extra_inputs=[bias_in("scaling_factor", ["CO", 1, 1, 1]), bias_in("extra_bias", ["CO", 1, 1, 1])],
        small=CONV3D_SMALL, alt=CONV3D_ALT,
        notes="scaling_factor and extra_bias are KernelBench's torch.randn parameters of shape (CO, 1, 1, 1) (its scalar scaling_factor argument is unused).")
last()["lead"]["blocked"] = True

problem(49, "conv_transpose3d_softmax_sigmoid", "ConvTranspose3d, softmax over channels, sigmoid", "convT3d",
        dict(B=16, CI=32, CO=64, D=16, H=32, W=32, K=3, S=2, P=1, OP=1),
        [Softmax(1, 2, "softmax over the channel dim"), Ew("l2_sigmoid(v)", "sigmoid")],
        ["x = torch.softmax(x, dim=1)", "x = torch.sigmoid(x)"], ["B", "CO", "OD", "OH", "OW"],
        tol=tol(1e-5, 1e-5, "softmax outputs are ~1/CO = 0.016, so the sigmoid outputs are 0.5039 with a spread of ~6e-4 that carries all the information: at KernelBench's 1e-4 a kernel 25% wrong in that spread passes; float32 math errs by ~1e-7, inside 2e-5, while a constant sigmoid(1/CO), a softmax over the wrong dim or a skipped bias fail"))

problem(50, "conv_transpose3d_scaling_avg_pool_bias_add_scaling", "ConvTranspose3d, scale, AvgPool3d, bias add, scale", "convT3d",
        dict(B=128, CI=3, CO=16, D=16, H=32, W=32, K=3, S=2, P=1, OP=0),
        [Ew("v * scale1", "multiply by scale1"), Pool("avg", ["2", "2", "2"], ["2", "2", "2"], "AvgPool3d(kernel 2, stride 2)"),
         Ew("v + {extra_bias}", "add extra_bias (CO, 1, 1, 1)"), Ew("v * scale2", "multiply by scale2")],
        ["x = x * d['scale1']", "x = F.avg_pool3d(x, kernel_size=2)", "x = x + extra_bias", "x = x * d['scale2']"],
        ["B", "CO", "OD/2", "OH/2", "OW/2"], extra_inputs=[bias_in("extra_bias", ["CO", 1, 1, 1])], params=[("scale1", 0.5), ("scale2", 1.0)],
        tol=tol(1e-5, 1e-4, "outputs are extra_bias (N(0, 1)) plus half a mean of 8 transposed-convolution outputs (~0.02 with CI = 3 and PyTorch's init); float32 math errs by ~1e-8 absolute; 1e-5 absolute keeps a kernel that drops the convolution part (bias only), skips the pool or the scale failing"),
        notes="scale1 and scale2 are scalar nn.Parameters in KernelBench (torch.tensor(0.5), torch.tensor(1.0)): params here. KernelBench's ConvTranspose3d here has no output padding (OP = 0).")

problem(51, "gemm_subtract_global_avg_pool_log_sum_exp_gelu_residual_add", "Linear, subtract, row mean, logsumexp, GELU, add the input", "linear",
        dict(B=2048, IN=8192, OUT=8192),
        [Ew("v - {subtract}", "subtract the parameter subtract (OUT)"),
         Reduce(1, 2, "mean", True, "mean over OUT, keepdim (B, 1)"),
         Ew("v", "logsumexp over dim 1 (size 1: the identity)"), Ew("l2_gelu(v)", "GELU (erf form)"),
         Ew("v + {x}", "add the ORIGINAL input x (B, IN), broadcasting the (B, 1) column: output (B, IN)", out_shape=["B", "IN"])],
        ["x = x - subtract", "x = torch.mean(x, dim=1, keepdim=True)", "x = torch.logsumexp(x, dim=1, keepdim=True)", "x = F.gelu(x)", "x = x + x0"],
        ["B", "IN"], extra_inputs=[bias_in("subtract", ["OUT"])],
        tol=tol(1e-4, 1e-4, "outputs are x + GELU(m) with m the row mean of the Linear output minus subtract (|m| ~ 0.01, GELU(m) ~ 0.005 beside |x| ~ 1): the added term is ~25 times the tolerance, so copying x through fails (KernelBench's rand inputs and 1e-2 let it pass); float32 math errs by ~1e-7, a skipped subtract or a sum in place of the mean fail"),
        notes="The residual is the input x itself (KernelBench clones it before the Linear), so the output has x's shape (B, IN); IN = OUT in KernelBench, any IN here.")
last()["torch"] = last()["torch"].replace("        d = self.d\n", "        d = self.d\n        x0 = x.clone()\n", 1)

problem(52, "conv2d_activation_batch_norm", "Conv2d, x * tanh(softplus(x)), BatchNorm2d (training)", "conv2d",
        dict(B=64, CI=64, CO=128, H=128, W=128, K=3, **C2),
        [Ew("v * tanh(l2_softplus(v))", "multiply tanh(softplus(x)) by x (Mish)"),
         Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm2d in training mode (batch statistics over B, OH, OW, biased variance), eps, affine bn_weight, bn_bias (CO)")],
        ["x = torch.tanh(F.softplus(x)) * x", "x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])"],
        ["B", "CO", "OH", "OW"], extra_inputs=affine("bn", "CO"), params=[("eps", 1e-5)], notes=TRAIN_BN)

problem(53, "gemm_scaling_hardtanh_gelu", "Linear, scale, Hardtanh, GELU", "linear",
        dict(B=2048, IN=8192, OUT=8192),
        [Ew("v * scaling_factor", "multiply by scaling_factor"), Ew("l2_clamp(v, hardtanh_min, hardtanh_max)", "Hardtanh(hardtanh_min, hardtanh_max)"),
         Ew("l2_gelu(v)", "GELU (erf form)")],
        ["x = x * d['scaling_factor']", "x = F.hardtanh(x, min_val=d['hardtanh_min'], max_val=d['hardtanh_max'])", "x = F.gelu(x)"],
        ["B", "OUT"], params=[("scaling_factor", 0.5), ("hardtanh_min", -2.0), ("hardtanh_max", 2.0)],
        notes="At PyTorch's init the scaled Linear outputs have std ~0.29, so the Hardtanh(-2, 2) almost never clips (as in KernelBench).")

problem(54, "conv2d_multiply_leaky_relu_gelu", "Conv2d, multiply by a per-channel parameter, LeakyReLU, GELU", "conv2d",
        dict(B=64, CI=64, CO=64, H=256, W=256, K=3, **C2),
        [Ew("v * {multiplier}", "multiply by multiplier (CO, 1, 1)"), Ew("l2_leaky(v, 0.01)", "LeakyReLU(0.01)"), Ew("l2_gelu(v)", "GELU (erf form)")],
        ["x = x * multiplier", "x = F.leaky_relu(x, negative_slope=0.01)", "x = F.gelu(x)"], ["B", "CO", "OH", "OW"],
        extra_inputs=[bias_in("multiplier", ["CO", 1, 1])])

problem(55, "matmul_max_pool_sum_scale", "Linear, MaxPool1d over the features, row sum, scale", "linear",
        dict(B=128, IN=32768, OUT=32768),
        [Pool("max", ["2"], ["2"], "MaxPool1d(kernel 2, stride 2) over the OUT features (KernelBench unsqueezes a channel dim of 1 and squeezes it back): (B, OUT/2)"),
         Reduce(1, 2, "sum", False, "sum over the OUT/2 pooled features: (B)"), Ew("v * scale_factor", "multiply by scale_factor")],
        ["x = F.max_pool1d(x.unsqueeze(1), kernel_size=2).squeeze(1)", "x = torch.sum(x, dim=1)", "x = x * d['scale_factor']"],
        ["B"], params=[("scale_factor", 0.5)],
        tol=tol(1e-4, 1e-4, "outputs are half the sum of OUT/2 = 16384 pair maxima, ~2700 with a spread of ~30 across rows; float32 sums of 16384 values err by ~1e-3 absolute, inside 1e-4 relative (~0.27); a constant, a mean in place of the max, a missing pool and a sum over the wrong dim fail"))

problem(56, "matmul_sigmoid_sum", "Linear, sigmoid, row sum", "linear",
        dict(B=128, IN=32768, OUT=32768),
        [Ew("l2_sigmoid(v)", "sigmoid"), Reduce(1, 2, "sum", True, "sum over OUT, keepdim (B, 1)")],
        ["x = torch.sigmoid(x)", "x = torch.sum(x, dim=1, keepdim=True)"], ["B", 1],
        tol=tol(1e-4, 1e-4, "outputs are sums of OUT = 32768 sigmoids, ~16384 with a spread of ~25 across rows; float32 sums err by ~1e-3 absolute, inside 1e-4 relative (~1.6); a constant OUT/2, a skipped bias and a sum over the wrong dim fail"))

problem(57, "conv2d_relu_hard_swish", "Conv2d, ReLU, x * clamp((x + 3)/6, 0, 1)", "conv2d",
        dict(B=128, CI=8, CO=64, H=128, W=128, K=3, **C2),
        [Ew("fmax(v, 0.0)", "ReLU"), Ew("v * l2_clamp((v + 3.0) / 6.0, 0.0, 1.0)", "x * clamp((x + 3)/6, 0, 1) (hardswish written out)")],
        ["x = torch.relu(x)", "x = x * torch.clamp((x + 3) / 6, 0, 1)"], ["B", "CO", "OH", "OW"])

# ---------------------------------------------------------------- problems 58-72

problem(58, "conv_transpose3d_log_sum_exp_hard_swish_subtract_clamp", "ConvTranspose3d, logsumexp over channels, x * sigmoid(x + 3)/6, subtract, clamp", "convT3d",
        dict(B=128, CI=3, CO=16, D=16, H=32, W=32, K=3, S=2, P=1, OP=0),
        [Reduce(1, 2, "lse", True, "logsumexp over the channel dim, keepdim (B, 1, OD, OH, OW)"),
         Ew("v * l2_sigmoid(v + 3.0) / 6.0", "x * sigmoid(x + 3) / 6 (KernelBench's own formula, not hardswish)"),
         Ew("v - {extra_bias}", "subtract extra_bias (1, 1, 1, 1), a scalar"), Ew("l2_clamp(v, -1.0, 1.0)", "clamp to [-1, 1]")],
        ["x = torch.logsumexp(x, dim=1, keepdim=True)", "x = x * torch.sigmoid(x + 3) / 6", "x = x - extra_bias", "x = torch.clamp(x, min=-1, max=1)"],
        ["B", 1, "OD", "OH", "OW"], extra_inputs=[bias_in("extra_bias", [1, 1, 1, 1])],
        tol=tol(1e-4, 1e-4, "before the clamp, outputs are ~0.46 - extra_bias with a spread of ~3e-3 (the logsumexp of 16 small convolution outputs is ~log(16) + 0.01); float32 math errs by ~1e-7, well inside 1e-4, while a constant, a max in place of the logsumexp and a real hardswish (x * relu6(x + 3)/6: 2.66 instead of 0.46) fail"),
        notes="extra_bias is KernelBench's torch.randn(1, 1, 1, 1): N(0, 1). When |0.46 - extra_bias| > 1 (about 37% of draws) every output is clamped to the same +-1; the verifier's several seeds keep a constant kernel failing. KernelBench's ConvTranspose3d here has no output padding (OP = 0).")

problem(59, "matmul_swish_scaling", "Linear, swish, scale", "linear",
        dict(B=128, IN=32768, OUT=32768),
        [Ew("v * l2_sigmoid(v)", "swish (x * sigmoid(x))"), Ew("v * scaling_factor", "multiply by scaling_factor")],
        ["x = x * torch.sigmoid(x)", "x = x * d['scaling_factor']"], ["B", "OUT"], params=[("scaling_factor", 2.0)])

problem(60, "conv_transpose3d_swish_group_norm_hard_swish", "ConvTranspose3d, swish, GroupNorm, hardswish", "convT3d",
        dict(B=128, CI=3, CO=16, D=16, H=32, W=32, K=3, S=2, P=1, OP=0, NG=4),
        [Ew("l2_sigmoid(v) * v", "swish (sigmoid(x) * x)"), gn("gn", "NG"), Ew("l2_hardswish(v)", "hardswish")],
        ["x = torch.sigmoid(x) * x", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])", "x = F.hardswish(x)"],
        ["B", "CO", "OD", "OH", "OW"], extra_inputs=affine("gn", "CO"), params=[("eps", 1e-5)],
        alt=[{"B": 3, "CI": 5, "CO": 12, "D": 5, "H": 7, "W": 9}, {"B": 1, "CI": 4, "CO": 16, "D": 3, "H": 9, "W": 17}],
        notes="KernelBench's ConvTranspose3d here has no output padding (OP = 0).")

problem(61, "conv_transpose3d_relu_group_norm", "ConvTranspose3d (no bias), ReLU, GroupNorm", "convT3d",
        dict(B=16, CI=64, CO=128, D=32, H=32, W=32, K=3, S=1, P=0, OP=0, NG=8),
        [Ew("fmax(v, 0.0)", "ReLU"), gn("gn", "NG")],
        ["x = torch.relu(x)", "x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])"],
        ["B", "CO", "OD", "OH", "OW"], extra_inputs=affine("gn", "CO"), params=[("eps", 1e-5)], bias=False,
        small={"B": 2, "CI": 3, "CO": 16, "D": 3, "H": 4, "W": 5},
        alt=[{"B": 3, "CI": 5, "CO": 24, "D": 5, "H": 7, "W": 9}, {"B": 1, "CI": 4, "CO": 32, "D": 3, "H": 9, "W": 17}],
        notes="KernelBench's ConvTranspose3d here has bias=False, stride 1 and no padding.")
last()["description"] = last()["description"].replace("output padding OP, with bias;", "output padding OP, NO bias;", 1)

problem(62, "matmul_group_norm_leaky_relu_sum", "Linear, GroupNorm, LeakyReLU, x + x", "linear",
        dict(B=1024, IN=8192, OUT=8192, NG=512),
        [Norm("group", "eps", "gn_weight", "gn_bias", "GroupNorm(NG groups of OUT/NG features, eps, affine gn_weight, gn_bias (OUT))", groups="NG"),
         Ew("l2_leaky(v, negative_slope)", "LeakyReLU(negative_slope)"), Ew("v + v", "add the result to itself")],
        ["x = F.group_norm(x, d['NG'], gn_weight, gn_bias, d['eps'])", "x = F.leaky_relu(x, negative_slope=d['negative_slope'])", "x = x + x"],
        ["B", "OUT"], extra_inputs=affine("gn", "OUT"), params=[("eps", 1e-5), ("negative_slope", 0.01)],
        small={"B": 4, "IN": 40, "OUT": 64, "NG": 4},
        alt=[{"B": 5, "IN": 257, "OUT": 160, "NG": 10}, {"B": 33, "IN": 1024, "OUT": 1000, "NG": 125}],
        notes="Groups hold OUT/NG = 16 features at the default dims (8 in one alt set).")

problem(63, "gemm_relu_divide", "Linear, ReLU, divide", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Ew("fmax(v, 0.0)", "ReLU"), Ew("v / divisor", "divide by divisor")],
        ["x = torch.relu(x)", "x = x / d['divisor']"], ["B", "OUT"], params=[("divisor", 2.0)])

problem(64, "gemm_log_sum_exp_leaky_relu_leaky_relu_gelu_gelu", "Linear, logsumexp, LeakyReLU twice, GELU twice", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Reduce(1, 2, "lse", True, "logsumexp over OUT, keepdim (B, 1)"),
         Ew("l2_leaky(v, 0.01)", "LeakyReLU(0.01)"), Ew("l2_leaky(v, 0.01)", "LeakyReLU(0.01) again"),
         Ew("l2_gelu(v)", "GELU (erf form)"), Ew("l2_gelu(v)", "GELU again")],
        ["x = torch.logsumexp(x, dim=1, keepdim=True)", "x = F.leaky_relu(x, negative_slope=0.01)", "x = F.leaky_relu(x, negative_slope=0.01)",
         "x = F.gelu(x)", "x = F.gelu(x)"], ["B", 1],
        tol=tol(1e-5, 1e-5, "outputs are the row logsumexp of the Linear outputs, ~log(OUT) + 0.17 = 9.18 with a spread of ~0.007 across rows (the LeakyReLUs and GELUs are the identity at that size, as in KernelBench); float32 math errs by ~1e-6, inside 1e-5 + 1e-5 relative (~1e-4), while a constant log(OUT) + 0.17, a max in place of the logsumexp and a skipped bias fail"),
        notes="At PyTorch's init the logsumexp is ~9.2 > 0, where LeakyReLU and GELU are (numerically) the identity.")

problem(65, "conv2d_avg_pool_sigmoid_sum", "Conv2d, AvgPool2d, sigmoid, sum over channels and space", "conv2d",
        dict(B=128, CI=8, CO=64, H=384, W=384, K=3, **C2),
        [Pool("avg", ["4", "4"], ["4", "4"], "AvgPool2d(kernel 4, stride 4)"), Ew("l2_sigmoid(v)", "sigmoid"),
         Reduce(1, 4, "sum", False, "sum over (CO, OH/4, OW/4): one value per batch element")],
        ["x = F.avg_pool2d(x, kernel_size=4)", "x = torch.sigmoid(x)", "x = torch.sum(x, dim=[1, 2, 3])"], ["B"],
        alt=[{"B": 3, "CI": 5, "CO": 7, "H": 33, "W": 17}, {"B": 1, "CI": 16, "CO": 32, "H": 67, "W": 131}],
        tol=tol(1e-3, 1e-5, "each output sums CO*(OH/4)*(OW/4) = 577600 sigmoids, ~2.9e5 with a spread of ~27 across the batch: KernelBench's 1e-4 relative (~29) would accept a kernel that knows only the expected value; float32 sums in blocks or pairwise err by ~0.03 (1e-7 relative), inside 1e-5 relative (~2.9), but one float32 accumulator over all 577600 terms errs by ~10 and fails (reduce in blocks, or in double); a skipped pool or bias fails"))

problem(66, "matmul_dropout_softmax", "Linear, dropout (mask as an input), softmax", "linear",
        dict(B=128, IN=16384, OUT=16384),
        [Ew("v * {dropout_mask}", "dropout: multiply by dropout_mask (B, OUT), 0 with probability dropout_p, else 1/(1 - dropout_p)"),
         Softmax(1, 2, "softmax over OUT")],
        ["x = x * dropout_mask", "x = torch.softmax(x, dim=1)"], ["B", "OUT"],
        extra_inputs=[{"name": "dropout_mask", "dtype": "f32", "shape": ["B", "OUT"], "init": {"dist": "bernoulli", "p": 0.2}}],
        params=[("dropout_p", 0.2)],
        tol=tol(1e-9, 1e-4, "softmax over OUT = 16384 features: outputs are ~6e-5 (from ~3e-6 to ~1e-3), so an absolute tolerance like KernelBench's 1e-4 (or 1e-2) accepts an all-zero output; atol 1e-9 with 1e-4 relative still passes float32 softmaxes (~1e-6 relative) and fails a skipped mask, a mask without the 1/(1 - p) scale and a softmax over the wrong dim"),
        notes="KernelBench draws the dropout mask inside the model (training mode), differently for the model and the reference; here the mask is the input dropout_mask so the problem is deterministic; dropout_p is stated for the record, the mask already holds it.")

problem(67, "conv2d_gelu_global_avg_pool", "Conv2d, GELU, global average pool", "conv2d",
        dict(B=128, CI=8, CO=64, H=256, W=256, K=3, **C2),
        [Ew("l2_gelu(v)", "GELU (erf form)"), Reduce(2, 4, "mean", False, "global average pool over (OH, OW), squeezed: (B, CO)")],
        ["x = F.gelu(x)", "x = F.adaptive_avg_pool2d(x, 1)", "x = x.squeeze(-1).squeeze(-1)"], ["B", "CO"],
        tol=tol(1e-5, 1e-4, "outputs are spatial means of GELU, ~0.06-0.17 per channel (set by its bias) with a spread of ~3e-3 across the batch; float32 means of 64516 values err by ~1e-7; 1e-5 absolute keeps a kernel that knows only each channel's expected value, a skipped bias and a max in place of the mean failing"))

problem(68, "matmul_min_subtract", "Linear, min with a constant, subtract the constant", "linear",
        dict(B=128, IN=16384, OUT=16384),
        [Ew("fmin(v, constant)", "min(x, constant) elementwise"), Ew("v - constant", "subtract constant")],
        ["x = torch.clamp(x, max=d['constant'])", "x = x - d['constant']"], ["B", "OUT"], params=[("constant", 2.0)],
        notes="constant is a scalar nn.Parameter in KernelBench (torch.tensor(2.0)): a param here. At PyTorch's init the Linear outputs have std ~0.58, so the min clips only ~0.03% of them (as in KernelBench).")

problem(69, "conv2d_hard_swish_relu", "Conv2d, hardswish, ReLU", "conv2d",
        dict(B=128, CI=8, CO=64, H=128, W=128, K=3, **C2),
        [Ew("l2_hardswish(v)", "hardswish"), Ew("fmax(v, 0.0)", "ReLU")],
        ["x = F.hardswish(x)", "x = torch.relu(x)"], ["B", "CO", "OH", "OW"])

problem(70, "gemm_sigmoid_scaling_residual_add", "Linear, sigmoid, scale, residual add", "linear",
        dict(B=1024, IN=8192, OUT=8192),
        [Save("orig"), Ew("l2_sigmoid(v)", "sigmoid"), Ew("v * scaling_factor", "multiply by scaling_factor"),
         Ew("v + {orig}", "add the Linear output (orig)")],
        ["orig = x", "x = torch.sigmoid(x)", "x = x * d['scaling_factor']", "x = x + orig"], ["B", "OUT"], params=[("scaling_factor", 2.0)])

problem(71, "conv2d_divide_leaky_relu", "Conv2d, divide, LeakyReLU", "conv2d",
        dict(B=128, CI=8, CO=64, H=128, W=128, K=3, **C2),
        [Ew("v / divisor", "divide by divisor"), Ew("l2_leaky(v, 0.01)", "LeakyReLU(0.01)")],
        ["x = x / d['divisor']", "x = F.leaky_relu(x, negative_slope=0.01)"], ["B", "CO", "OH", "OW"], params=[("divisor", 2.0)])

problem(72, "conv_transpose3d_batch_norm_avg_pool_avg_pool", "ConvTranspose3d, BatchNorm3d (training), two AvgPool3d", "convT3d",
        dict(B=64, CI=3, CO=16, D=32, H=32, W=32, K=3, S=2, P=1, OP=0),
        [Norm("batch", "eps", "bn_weight", "bn_bias", "BatchNorm3d in training mode (batch statistics over B, OD, OH, OW, biased variance), eps, affine bn_weight, bn_bias (CO)"),
         Pool("avg", ["2", "2", "2"], ["2", "2", "2"], "AvgPool3d(kernel 2, stride 2)"),
         Pool("avg", ["2", "2", "2"], ["2", "2", "2"], "AvgPool3d(kernel 2, stride 2) again")],
        ["x = F.batch_norm(x, None, None, bn_weight, bn_bias, training=True, eps=d['eps'])",
         "x = F.avg_pool3d(x, kernel_size=2)", "x = F.avg_pool3d(x, kernel_size=2)"],
        ["B", "CO", "OD/2/2", "OH/2/2", "OW/2/2"], extra_inputs=affine("bn", "CO"), params=[("eps", 1e-5)],
        small={"B": 2, "CI": 3, "CO": 8, "D": 3, "H": 4, "W": 5},
        alt=[{"B": 3, "CI": 5, "CO": 7, "D": 5, "H": 7, "W": 9}, {"B": 1, "CI": 4, "CO": 16, "D": 4, "H": 9, "W": 17}],
        tol=tol(1e-4, 1e-4, "outputs are means of 64 neighbouring batch-normalised values, bn_bias plus a few tenths of bn_weight; float32 statistics over B*OD*OH*OW = 16M values per channel err by ~1e-6 relative when reduced in blocks, inside 1e-4; eval-mode statistics, a skipped affine and a skipped pool fail"),
        notes=TRAIN_BN + " The ConvTranspose3d bias cancels in the BatchNorm (a kernel may drop it). KernelBench's ConvTranspose3d here has no output padding (OP = 0); its unused bias_shape argument creates nothing.")

# ================================================================================================
# Problems 073-100 (first written as level2_specs_c.py).
# "Blocked" Conv3d leads and the previous section's conventions (tol, last, ONES) are used as
# there. Problems 080 and 083 are identically zero
# (marked "degenerate"); tolerances say per problem why they are what they are.
_C0 = len(SPECS)  # the first spec of this section

# torch.ones parameters: 1 in the first check; the checks that vary constants draw them N(1, 0.5)
# (085's per-channel scale, any sign) or uniform(0.5, 1.5) (084's softmax temperature: its
# tolerance allows logits scaled by up to ~2.5, and a positive scale keeps the softmax's sense)
ONES_POS = {"dist": "constant", "value": 1, "vary": {"dist": "uniform", "lo": 0.5, "hi": 1.5}}
BLOCKED = set()  # Conv3d-led problems that use shared/conv3d_blocked_ref.cuh




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


# The file each spec was first written in, named by the first line of its generated reference.
for _spec in SPECS[:_B0]:
    _spec.setdefault("specs_file", "level2_specs.py")
for _spec in SPECS[_B0:_C0]:
    _spec.setdefault("specs_file", "level2_specs_b.py")
for _spec in SPECS[_C0:]:
    _spec.setdefault("specs_file", "level2_specs_c.py")

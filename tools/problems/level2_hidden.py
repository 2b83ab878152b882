"""level2_hidden: the "hidden" dims generators of the level-2 manifests (kc-problem v1's hidden
object: the verifier draws dims from it at verification time), read by tools/problems/gen_level2.py.

hidden_for(spec) builds a manifest's object from the base ranges of its leading op (LEAD) and the
problem's entry in PROBLEMS (range overrides, extra requires, caps, the why sentence). Dims the
entry does not range (KernelBench's constructor hyper-parameters: kernel size, stride, padding,
output padding, pool kernels) stay at the default set's value: the shared reference kernels take
them at run time, but every fixed set uses one value and a kernel may compile them in. The
group count NG is ranged over every divisor of the channels it splits, with two values per group
at least (PyTorch refuses a group of one value). Every derived dim and every
computed output extent is required >= 1; pools on a computed extent add their own require (C's
truncating division would give a size-1 input a pool output of 1). Caps keep one hidden run cheap:
the reference runs in double (the direct Conv3d one thread per output, hence its lower flops cap)."""
import re

MiB = 1 << 20

# Base ranges per leading op: (min, max) inclusive; "caps": max_flops, max_bytes.
LEAD = {
    "linear": {"dims": {"B": (1, 520), "IN": (1, 4200), "OUT": (1, 4200)},
               "flops": 20000000000, "bytes": 64 * MiB,
               "note": "sizes odd, prime and just off the 64-wide tiles of the linear reference"},
    "conv2d": {"dims": {"B": (1, 7), "CI": (1, 67), "CO": (1, 131), "H": (3, 300), "W": (3, 300)},
               "flops": 10000000000, "bytes": 64 * MiB,
               "note": "CO off the 16-channel blocks, OH and OW off the 8x64 output tiles"},
    "conv3d": {"dims": {"B": (1, 5), "CI": (1, 17), "CO": (1, 40), "D": (3, 20), "H": (3, 40), "W": (3, 40)},
               "flops": 2000000000, "bytes": 64 * MiB,
               "note": "small volumes"},
    "convT2d": {"dims": {"B": (1, 7), "CI": (1, 67), "CO": (1, 131), "H": (1, 150), "W": (1, 150)},
                "flops": 10000000000, "bytes": 64 * MiB,
                "note": "output widths off the 4-column thread chunks"},
    "convT3d": {"dims": {"B": (1, 5), "CI": (1, 33), "CO": (1, 67), "D": (1, 12), "H": (1, 24), "W": (1, 24)},
                "flops": 3000000000, "bytes": 64 * MiB,
                "note": "small volumes"},
}
BLOCKED_FLOPS = 5000000000  # the register-blocked Conv3d reference is ~10x the direct one

ROWS_LONG = {"B": (1, 260), "IN": (1, 2100), "OUT": (1, 16411)}  # long rows for row reductions
GN_LIN = {"NG": {"divisor_of": "OUT"}}
GN_CONV = {"NG": {"divisor_of": "CO"}}
BN_LIN = ["B >= 2"]  # BatchNorm1d in training mode needs two values per feature

# Per problem: dims (overrides of LEAD's ranges; a tuple is a range, a dict a generator as the
# manifest writes it), mins (raised lower ends, so that few draws break a require), require (besides the automatic ones), flops/bytes caps, why.
PROBLEMS = {
    1: {"why": "ReLU and a per-channel bias: any size; CO off multiples of 16 checks the partial channel block"},
    2: {"why": "elementwise clamps and scales after a stride-2 transposed convolution: any size"},
    3: {"dims": {"CO": {"expr": "(W - 1)*S - 2*P + K + OP"}},
        "why": "the LayerNorm runs over the last dim OW with a (CO) weight, so CO is tied to OW = 2*W (require OW == CO); the AvgPool3d(2) needs OD, OH, OW >= 2",
        "require": ["OW == CO"]},
    4: {"why": "two Mish: any size"},
    5: {"why": "per-channel subtract and tanh after a K=4, stride-2 transposed convolution: any size"},
    6: {"mins": {"D": 6, "H": 6, "W": 6}, "require": ["OD >= 4", "OH >= 4", "OW >= 4"],
        "why": "softmax over CO (1 to 40 channels), then two MaxPool3d(2): the conv output must be at least 4 in each spatial dim"},
    7: {"why": "elementwise chain and a per-channel bias: any size"},
    8: {"mins": {"D": 4, "H": 4, "W": 4}, "require": ["OD >= 2", "OH >= 2", "OW >= 2"],
        "why": "MaxPool3d(2) then a global mean and a channel sum: output extents >= 2 so the pool has a window; odd extents drop their last row"},
    9: {"why": "elementwise epilogue: any size, B = 1 included"},
    10: {"mins": {"H": 2, "W": 2}, "require": ["OH >= 2", "OW >= 2"],
         "why": "MaxPool2d(2) then a spatial mean: OH, OW >= 2, odd ones drop the last row and column"},
    11: {"dims": GN_CONV, "require": ["OH >= 2", "OW >= 2"],
         "why": "BatchNorm over B*OH*OW, MaxPool2d(2) (OH, OW >= 2) and GroupNorm with NG any divisor of CO (groups of 1 to CO channels)"},
    12: {"why": "elementwise epilogue: any size"},
    13: {"why": "mean over depth and softmax over CO (1 to 67 channels): any size"},
    14: {"why": "row sum of a no-bias matmul with N(0, 1) weights: sizes at most half the default keep the sum's float32 error inside the absolute tolerance"},
    15: {"why": "BatchNorm3d over B*OD*OH*OW and a per-(b, c) spatial mean: any size, B = 1 included"},
    16: {"why": "elementwise chain: any size"},
    17: {"require": ["OH*OW >= 2"],
         "why": "InstanceNorm over OH*OW (at least 2 values, as torch requires)"},
    18: {"dims": ROWS_LONG, "why": "a row sum over OUT: long rows up to 16411 features, few rows"},
    19: {"dims": GN_CONV, "why": "GroupNorm with NG any divisor of CO, from one group of all channels to one channel per group"},
    20: {"why": "residual elementwise chain: any size"},
    21: {"dims": GN_CONV, "why": "GroupNorm with NG any divisor of CO"},
    22: {"dims": ROWS_LONG, "why": "a row logsumexp over OUT: long rows up to 16411, few rows"},
    23: {"dims": GN_CONV, "why": "GroupNorm with NG any divisor of CO, then a mean over everything but the batch"},
    24: {"why": "min over depth (OD 1 to 18) and softmax over CO: any size"},
    25: {"why": "min over CO: any CO from 1, odd spatial sizes"},
    26: {"why": "adds a full-size input: any size"},
    27: {"mins": {"D": 4, "H": 4, "W": 4}, "dims": GN_CONV, "why": "K = 4 (D, H, W >= 4); GroupNorm with NG any divisor of CO, then the spatial mean"},
    28: {"mins": {"OUT": 2}, "require": ["OUT >= 2"], "why": "the instance norm runs over the OUT features (at least 2, as torch requires)"},
    29: {"why": "elementwise epilogue: any size"},
    30: {"dims": GN_LIN, "why": "GroupNorm over OUT features with NG any divisor of OUT (prime OUT gives 1 or OUT groups)"},
    31: {"why": "elementwise chain and a per-channel bias: any size"},
    32: {"why": "min over CO: any CO from 1"},
    33: {"mins": {"B": 2}, "require": BN_LIN, "why": "BatchNorm1d over the B rows: B >= 2 (torch refuses one value per feature in training mode)"},
    34: {"dims": {"CO": {"expr": "(W - 1)*S - 2*P + K + OP"}},
         "why": "the LayerNorm runs over the last dim OW with a (CO) weight, so CO is tied to OW = 2*W (require OW == CO)",
         "require": ["OW == CO"]},
    35: {"mins": {"H": 4, "W": 4}, "require": ["OH >= 2", "OW >= 2"], "why": "MaxPool2d(2) needs OH, OW >= 2; odd extents drop a row and column"},
    36: {"why": "min over CO and sum over OH: any size"},
    37: {"dims": GN_LIN, "why": "GroupNorm over OUT with NG any divisor of OUT"},
    38: {"dims": {"D": (2, 24), "H": (2, 48), "W": (2, 48)},
         "why": "AvgPool3d(2) on x first (D, H, W >= 2, odd ones floor), then the transposed convolution of the pooled x and a softmax over all of OD*OH*OW; scale varies"},
    39: {"mins": {"B": 2}, "require": BN_LIN, "why": "BatchNorm1d over B rows (B >= 2)"},
    40: {"why": "residual elementwise chain: any size"},
    41: {"mins": {"B": 2}, "require": BN_LIN, "why": "BatchNorm1d over B rows (B >= 2)"},
    42: {"why": "global mean over OH*OW, then logsumexp over CO: any size"},
    43: {"mins": {"H": 2, "W": 2}, "dims": {"D": (2, 20)}, "require": ["OD >= 2", "OH >= 2", "OW >= 2"],
         "why": "padded K=3 conv (OD = D) then MaxPool3d(2): D, H, W >= 2; logsumexp over CO"},
    44: {"why": "spatial means: any size"},
    45: {"dims": {"O2": (1, 2100)}, "flops": 20000000000,
         "why": "two Linears (O2 up to 2100) and a row logsumexp over O2"},
    46: {"mins": {"H": 4, "W": 4}, "require": ["OH >= 2", "OW >= 2"], "why": "AvgPool2d(2) needs OH, OW >= 2; odd extents floor"},
    47: {"why": "elementwise after the blocked Conv3d: any size"},
    48: {"why": "per-channel scale and bias after the blocked Conv3d: any size"},
    49: {"why": "softmax over CO (1 to 67 channels)"},
    50: {"mins": {"D": 2, "H": 2, "W": 2}, "require": ["OD >= 2", "OH >= 2", "OW >= 2"], "why": "AvgPool3d(2) needs OD, OH, OW >= 2"},
    51: {"why": "row mean over OUT, then the residual adds x of shape (B, IN): IN and OUT drawn independently"},
    52: {"why": "BatchNorm2d over B*OH*OW: any size, B = 1 included"},
    53: {"why": "elementwise epilogue: any size"},
    54: {"why": "per-channel multiply: any size"},
    55: {"mins": {"OUT": 2}, "dims": ROWS_LONG, "require": ["OUT >= 2"],
         "why": "MaxPool1d(2) over OUT (OUT >= 2; odd OUT drops the last feature) and a row sum: long rows up to 16411"},
    56: {"dims": ROWS_LONG, "why": "row sum of sigmoids: long rows up to 16411"},
    57: {"why": "elementwise epilogue: any size"},
    58: {"why": "logsumexp over CO: any size"},
    59: {"dims": ROWS_LONG, "why": "elementwise epilogue: long rows up to 16411"},
    60: {"dims": GN_CONV, "why": "GroupNorm with NG any divisor of CO"},
    61: {"dims": GN_CONV, "why": "GroupNorm with NG any divisor of CO; stride 1, no padding"},
    62: {"dims": GN_LIN, "why": "GroupNorm over OUT with NG any divisor of OUT"},
    63: {"why": "elementwise epilogue: any size"},
    64: {"dims": ROWS_LONG, "why": "row logsumexp: long rows up to 16411"},
    65: {"mins": {"H": 6, "W": 6}, "require": ["OH >= 4", "OW >= 4"], "why": "AvgPool2d(4) needs OH, OW >= 4 (remainders floor), then a sum over CO and space"},
    66: {"dims": ROWS_LONG, "why": "softmax over OUT: long rows up to 16411 with the dropout mask"},
    67: {"why": "global mean over OH*OW: any size"},
    68: {"dims": ROWS_LONG, "why": "elementwise epilogue: long rows up to 16411"},
    69: {"why": "elementwise epilogue: any size"},
    70: {"why": "residual elementwise chain: any size"},
    71: {"why": "elementwise epilogue: any size"},
    72: {"mins": {"D": 3, "H": 3, "W": 3}, "require": ["OD >= 4", "OH >= 4", "OW >= 4"],
         "why": "BatchNorm3d then two AvgPool3d(2): OD, OH, OW >= 4"},
    73: {"why": "BatchNorm2d over B*OH*OW: any size"},
    74: {"require": ["OD >= 2", "OH >= 2", "OW >= 2"], "why": "MaxPool3d(2) needs OD, OH, OW >= 2"},
    75: {"dims": GN_LIN, "why": "GroupNorm over OUT with NG any divisor of OUT, then the row min broadcast to (1, OUT, B, 1)"},
    76: {"why": "elementwise epilogue: any size"},
    77: {"mins": {"B": 2}, "require": ["B >= 2"],
         "why": "BatchNorm3d then a per-(b, c) spatial mean: B >= 2 (with one batch entry the output is bn_bias exactly); K = 5, stride 1"},
    78: {"mins": {"H": 4, "W": 4}, "dims": {"D": (4, 12)}, "require": ["OD >= 6", "OH >= 6", "OW >= 6"],
         "why": "MaxPool3d(2) then MaxPool3d(3) (floor): OD, OH, OW = 2*D - 1 etc. >= 6, then a sum over CO"},
    79: {"require": ["OD*OH*OW >= 2"],
         "why": "InstanceNorm3d over OD*OH*OW (at least 2 values), then a max over CO"},
    80: {"why": "identically zero output: any size"},
    81: {"why": "elementwise epilogue: any size"},
    82: {"mins": {"H": 6, "W": 6}, "require": ["OH >= PK", "OW >= PK"], "why": "MaxPool2d(PK = 4, floor): OH, OW >= 4 with remainders dropped"},
    83: {"dims": GN_CONV, "why": "identically zero output; GroupNorm with NG any divisor of CO"},
    84: {"mins": {"B": 2}, "require": BN_LIN, "why": "BatchNorm1d over B rows (B >= 2), softmax over OUT; scale varies in (0.5, 1.5)"},
    85: {"mins": {"H": 6, "W": 6}, "dims": GN_CONV, "require": ["OH >= PK", "OW >= PK"],
         "why": "GroupNorm with NG any divisor of CO, MaxPool2d(PK = 4, floor) needs OH, OW >= 4; scale varies"},
    86: {"why": "elementwise epilogue: any size"},
    87: {"why": "elementwise epilogue: any size"},
    88: {"dims": GN_LIN, "why": "GroupNorm over OUT with NG any divisor of OUT"},
    89: {"require": ["OD >= 2", "OH >= 2", "OW >= 2"], "why": "MaxPool3d(2) needs OD, OH, OW >= 2, then softmax and max over CO"},
    90: {"why": "elementwise chain after the blocked Conv3d: any size"},
    91: {"why": "softmax over CO (1 to 131 channels)"},
    92: {"dims": GN_CONV, "why": "GroupNorm with NG any divisor of CO, then logsumexp over CO"},
    93: {"why": "elementwise chain: any size"},
    94: {"dims": GN_LIN, "why": "GroupNorm over OUT with NG any divisor of OUT"},
    95: {"why": "elementwise chain: any size"},
    96: {"mins": {"D": 2, "H": 2, "W": 2}, "require": ["OD >= PK", "OH >= PK", "OW >= PK"], "why": "MaxPool3d(PK = 2, floor) needs OD, OH, OW >= 2, then the global mean"},
    97: {"mins": {"B": 2}, "require": BN_LIN, "why": "BatchNorm1d over B rows (B >= 2)"},
    98: {"mins": {"OUT": 16}, "dims": ROWS_LONG, "require": ["OUT >= PK"],
         "why": "AvgPool1d(PK = 16, floor) over OUT needs OUT >= 16, remainders dropped; long rows up to 16411"},
    99: {"dims": ROWS_LONG, "why": "softmax over OUT: long rows up to 16411"},
    100: {"why": "elementwise chain: any size"},
}


def plain_name(expr):
    return isinstance(expr, int) or re.fullmatch(r"[A-Za-z_]\w*|\d+", str(expr)) is not None


def describe(dims):
    """The draw in words: ranges, computed dims, then the dims held at KernelBench's values."""
    parts, fixed = [], []
    for name, g in dims.items():
        if "min" in g:
            parts.append("%s %d-%d" % (name, g["min"], g["max"]))
        elif "divisor_of" in g:
            parts.append("%s any divisor of %s" % (name, g["divisor_of"]))
        elif "expr" in g:
            parts.append("%s = %s" % (name, g["expr"]))
        else:
            fixed.append("%s = %s" % (name, g["values"][0]))
    text = ", ".join(parts)
    if fixed:
        text += " with %s fixed at KernelBench's values (every fixed set uses them)" % ", ".join(fixed)
    return text


# The output extents of each leading op: what a GroupNorm right after it normalises per channel.
SPATIAL = {"linear": [], "conv2d": ["OH", "OW"], "convT2d": ["OH", "OW"],
           "conv3d": ["OD", "OH", "OW"], "convT3d": ["OD", "OH", "OW"]}


def group_norm_requires(spec, kind, dims):
    """GroupNorm needs two values per group (PyTorch refuses one: a group of one value has no
    variance): channels per group times the spatial extents >= 2."""
    if "NG" not in dims:
        return []
    channels = "OUT" if kind == "linear" else "CO"
    extents = [e for e in SPATIAL[kind] if e in spec.get("derived", {})]
    return ["%s >= 2" % "*".join(["(%s/NG)" % channels] + extents)]


def hidden_for(spec):
    """The manifest's "hidden" object for a spec (see the module docstring)."""
    kind = spec["lead"]["kind"]
    base, entry = LEAD[kind], PROBLEMS[spec["id"]]
    ranges = dict(base["dims"])
    ranges.update(entry.get("dims", {}))
    for name, lo in entry.get("mins", {}).items():  # raised lower ends (pools, norms)
        ranges[name] = (lo, ranges[name][1])
    drawn, computed = {}, {}
    for name, value in spec["dims"]["default"].items():
        g = ranges.get(name)
        if g is None:
            drawn[name] = {"values": [value]}
        elif isinstance(g, tuple):
            drawn[name] = {"min": g[0], "max": g[1]}
        else:
            computed[name] = g  # expr or divisor_of: after the dims it reads
    dims = dict(drawn, **computed)
    require = ["%s >= 1" % k for k in spec.get("derived", {})]
    for s in spec["outputs"][0]["shape"]:
        if not plain_name(s) and "%s >= 1" % s not in require:
            require.append("%s >= 1" % s)
    require += [r for r in entry.get("require", []) if r not in require]
    require += [r for r in group_norm_requires(spec, kind, dims) if r not in require]
    flops = entry.get("flops", BLOCKED_FLOPS if spec["lead"].get("blocked") else base["flops"])
    note = base["note"]
    if kind == "conv3d":
        note += (" (the register-blocked reference: flops up to 5e9)" if spec["lead"].get("blocked")
                 else " (the reference's direct double convolution, one thread per output: flops up to 2e9)")
    why = "%s; draws %s; %s" % (entry["why"], describe(dims), note)
    return {"dims": dims, "require": require, "max_bytes": entry.get("bytes", base["bytes"]),
            "max_flops": flops, "why": why}

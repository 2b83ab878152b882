"""value_classes: the value classes of every manifest (kc-problem v1's "values" and each param's
"vary"; docs/PROBLEMS.md, "Value classes") and the capacity sets of the cheap operators
("hidden.capacity"), decided per problem from its operator.

    level1(m)     level 1, from the manifest m (a table by problem number below)
    attention(m)  the attention suite
    level2(spec)  level 2, from the chain spec of tools/problems/level2_specs.py

Each returns a Decl: values (the manifest's "values" object), vary ({param name: {"vary": [...],
"vary_why": ...}}) and capacity (hidden.capacity, or None). tools/problems/add_value_classes.py
writes level 1 and attention into their manifests; tools/problems/gen_level2.py emits level 2.

What the verifier does with them (verify/worker): the runs that vary constants use each param's
vary values in turn; structured runs (default-dims seeds 4 and 5, the random drawn sets) give
every float input drawn from normal or uniform_fan_in per-row scales in [1/4, 4] (first dim),
per-column scales in [1/2, 2] (last dim) and per-row offsets (normal inputs), plus 16 secret
spikes of +-spike standard deviations per normal input, and compare with atol * structure atol;
the large run (first alt dims) multiplies those inputs by the scale, atol * large atol; the
special run (small dims) puts the listed values at secret positions of normal inputs and wants
NaN/Inf agreement. The atol multiples follow from how float32 rounding grows with the scales:
an elementwise op keeps its relative error (rtol follows the magnitude: 1); a sum over an inner
dim whose terms take a scale of up to 8 from each scaled operand grows its absolute error near
cancelling outputs by 8 per operand (64 for a matmul or convolution). Capacity sets (run by every
verification past the hidden caps): (a) more rows than grid.y/grid.z index (first dim 70001),
(b) more than 2^31 elements in the largest tensor (elementwise ops, reductions, scans, losses),
inputs and outputs within 24 GiB."""

OFF_HOMOGENEOUS = ("{op} is positively homogeneous (a magnitude scales its output alike, with no "
                   "exp, square or division to overflow): the structured runs' scales cover magnitude")
ALL_SPECIAL = ["nan", "inf", "-inf", "-0"]


def values(large, large_atol, large_why, on, spike, s_atol, s_why, special, special_why):
    """The manifest's "values" object (members in the documented order)."""
    lg = {"scale": large}
    if large:
        lg["atol"] = large_atol
    lg["why"] = large_why
    st = {"on": on}
    if on:
        if spike:
            st["spike"] = spike
        st["atol"] = s_atol
    st["why"] = s_why
    return {"large": lg, "structure": st, "special": {"values": list(special), "why": special_why}}


def vary(vals, why=None):
    v = {"vary": list(vals)}
    if why:
        v["vary_why"] = why
    return v


# ---------------------------------------------------------------- capacity sets

ROWS = 70001  # > 65535: more rows than grid.y or grid.z can index

CAP_A_WHY = ("70001 rows: more than grid.y or grid.z can index (65535), for a kernel that maps "
             "rows to grid.y; the other dims small")
CAP_B_WHY = ("{n} elements in the largest tensor: past 2^31, for 32-bit flat indices; inputs and "
             "outputs together {gb:.1f} GB")


def capacity(m, sets):
    """hidden.capacity with its why; every set names every dim of dims.default (fixed ones as in
    dims.default), its largest tensor's element count and the bytes of all tensors in the why."""
    import kcproblems
    full = []
    why = []
    for s in sets:
        d = dict(m["dims"]["default"])
        d.update(s)
        full.append({k: d[k] for k in m["dims"]["default"]})
        dd = dict(d)
        for k, e in m.get("derived", {}).items():
            dd[k] = kcproblems.eval_dim_expr(e, dd)
        big = 0
        for t in m["inputs"] + m["outputs"]:
            n = 1
            for e in kcproblems.shape_of(t, dd):
                n *= e
            big = max(big, n)
        if big > (1 << 31):
            why.append(CAP_B_WHY.format(n="{:,}".format(big), gb=kcproblems.tensor_bytes(m, dd) / 1e9))
        else:
            why.append(CAP_A_WHY)
    return {"sets": full, "why": "; ".join(why)}


# ---------------------------------------------------------------- level 1

# Per category: the structure atol multiple and its why, and the special values' why.
ELEMENTWISE_STRUCT = ("{op} is elementwise: each output follows its own input, so per-row and "
                      "per-column scales only move magnitudes, which rtol follows (atol unchanged); no "
                      "spikes, nothing is reduced")
MATMUL_STRUCT = ("{op}: each product over the inner dim takes a scale of up to 8x from each scaled "
                 "operand, so float32 rounding of the sums grows by up to 64x where outputs cancel "
                 "toward 0 (atol x64; rtol covers the rest); no spikes: the per-row and per-column "
                 "scales already make a kernel that skips or samples the inner dim far off")
MATMUL_SPECIAL = ("sums of products: the reference's exact products and double sums propagate NaN "
                  "and +-inf as any float32 product does (inf - inf = NaN in any order), -0 acts as 0")
CONV_SPECIAL = ("only -0 (acts as 0): PyTorch's own convolution picks its algorithm (implicit GEMM, "
                "Winograd or FFT transforms spread NaN and inf to neighbouring outputs), so the "
                "operator defines no result for NaN or inf inputs")

# Level 1 by problem number: (category, phrase naming the op, overrides). Categories:
# mm (matmul), ew (elementwise), softmax, norm, reduce, argred (max/min/argmax/argmin), maxpool,
# avgpool, conv, scan, loss, sdpa.
L1 = {
    1: ("mm", "the square matrix product"), 2: ("mm", "the matrix product"),
    3: ("mm", "the batched matrix product"), 4: ("mm", "the matrix-vector product"),
    5: ("ew", "multiplication by the scalar s", {"special": ALL_SPECIAL}),
    6: ("mm", "the matrix product over a long K"), 7: ("mm", "the matrix product over a short K"),
    8: ("mm", "the matrix product of irregular shapes"), 9: ("mm", "the tall-skinny matrix product"),
    10: ("mm", "the 3-D tensor-matrix product"), 11: ("mm", "the 4-D tensor-matrix product"),
    12: ("ew", "scaling each row by its diagonal entry", {"special": ALL_SPECIAL}),
    13: ("mm", "the matrix product"), 14: ("mm", "the matrix product (upper triangle kept)"),
    15: ("mm", "the matrix product (lower triangle kept)"), 16: ("mm", "the matrix product"),
    17: ("mm", "the matrix product"), 18: ("mm", "the matrix product"),
    19: ("ew", "ReLU", {"special": ["inf", "-inf", "-0"],
                        "special_why": "max(x, 0) maps +-inf to inf and 0 as torch.relu does, -0 to 0; "
                                       "not NaN: the reference's x > 0 ? x : 0 gives 0 where torch.relu keeps NaN"}),
    20: ("ew", "LeakyReLU", {"special": ALL_SPECIAL,
                             "special_why": "x > 0 ? x : x * slope in float32, PyTorch's own form: NaN stays "
                                            "NaN, inf stays inf, -inf becomes -inf * 0.01, -0 acts as 0"}),
    21: ("ew", "the sigmoid", {"large": True, "special": ALL_SPECIAL, "bounded": True,
                               "special_why": "1 / (1 + exp(-x)) in double: NaN stays NaN, inf gives 1, -inf "
                                              "gives 0 (the limits, as torch.sigmoid), -0 gives 0.5"}),
    22: ("ew", "tanh", {"large": True, "special": ALL_SPECIAL, "bounded": True,
                        "special_why": "tanh in double: NaN stays NaN, +-inf give +-1, -0 gives -0, as torch.tanh"}),
    23: ("softmax", "softmax over each row"), 24: ("softmax", "log-softmax over each row"),
    25: ("ew", "Swish (x * sigmoid(x))", {"large": True, "special": ["nan", "inf", "-0"],
                                          "special_why": "NaN stays NaN, inf gives inf, -0 gives 0 in the reference and in "
                                                         "PyTorch; not -inf, whose NaN (-inf * 0) is an artefact of the formula"}),
    26: ("ew", "GELU (erf form)", {"special": ["nan", "inf", "-0"],
                                   "special_why": "0.5 x (1 + erf(x / sqrt 2)): NaN stays NaN, inf gives inf, -0 gives 0; "
                                                  "not -inf, whose NaN (-inf * 0) is an artefact of the formula",
                                   "large_why": "erf saturates to +-1 without an exp to overflow, and GELU grows like x: "
                                                "magnitude is covered by the structured runs' scales"}),
    27: ("ew", "SELU", {"large": True, "special": ALL_SPECIAL,
                        "special_why": "x > 0 ? scale x : scale alpha expm1(x), PyTorch's form: NaN stays NaN, inf "
                                       "gives inf, -inf gives -scale*alpha (the limit), -0 gives 0"}),
    28: ("ew", "HardSigmoid", {"special": ["inf", "-inf", "-0"],
                               "special_why": "clamp((x + 3) / 6, 0, 1): +-inf give 1 and 0, -0 gives 0.5; not NaN: a "
                                              "clamp written with fminf/fmaxf drops it, and PyTorch's NaN rule for "
                                              "hardsigmoid is not documented"}),
    29: ("ew", "Softplus", {"large": True, "special": ALL_SPECIAL,
                            "special_why": "x > 20 ? x : log1p(exp(x)), PyTorch's threshold form: NaN stays NaN, inf "
                                           "gives inf, -inf gives 0, -0 gives log 2"}),
    30: ("ew", "Softsign", {"special": ["nan", "-0"],
                            "special_why": "x / (1 + |x|): NaN stays NaN, -0 gives 0; not +-inf, whose NaN (inf / inf) "
                                           "is an artefact of the formula"}),
    31: ("ew", "ELU", {"large": True, "special": ALL_SPECIAL,
                       "special_why": "x > 0 ? x : alpha expm1(x), PyTorch's form: NaN stays NaN, inf gives inf, "
                                      "-inf gives -alpha (the limit), -0 gives 0"}),
    32: ("ew", "HardTanh", {"special": ["inf", "-inf", "-0"],
                            "special_why": "clamp(x, -1, 1): +-inf give +-1, -0 gives 0; not NaN: a clamp written "
                                           "with fminf/fmaxf drops it where torch.clamp keeps it"}),
    33: ("norm", "BatchNorm (statistics per channel over N, H, W)", {"affine": True}),
    34: ("norm", "InstanceNorm (statistics per (n, c) plane)"),
    35: ("norm", "GroupNorm (statistics per group of channels)", {"affine": True}),
    36: ("norm", "RMSNorm over the channels"), 37: ("norm", "the Frobenius normalisation"),
    38: ("norm", "L1 normalisation of each row"), 39: ("norm", "L2 normalisation of each row"),
    40: ("norm", "LayerNorm over (C, H, W)", {"affine": True}),
    41: ("maxpool", "1-D max pooling (window 8)"), 42: ("maxpool", "2-D max pooling (window 4x4)"),
    43: ("maxpool", "3-D max pooling (window 3x3x3)"),
    44: ("avgpool", "1-D average pooling (window 8)"), 45: ("avgpool", "2-D average pooling (window 11x11)"),
    46: ("avgpool", "3-D average pooling (window 3x3x3)"),
    47: ("reduce", "the sum over dim 1"), 48: ("reduce", "the mean over dim 1"),
    49: ("argred", "the max over dim 1"), 50: ("conv", "the AlexNet stem convolution"),
    51: ("argred", "argmax over dim 1", {"special": ["inf", "-inf", "-0"],
                                         "special_why": "an inf is the unique maximum and wins argmax, -inf never does, "
                                                        "-0 ties nothing; not NaN: where argmax puts a NaN is not "
                                                        "documented by PyTorch"}),
    52: ("argred", "argmin over dim 1", {"special": ["inf", "-inf", "-0"],
                                         "special_why": "a -inf is the unique minimum and wins argmin, inf never does, "
                                                        "-0 ties nothing; not NaN: where argmin puts a NaN is not "
                                                        "documented by PyTorch"}),
    53: ("argred", "the min over dim 1"),
    86: ("conv", "the depthwise-separable convolution (two convolutions)", {"struct_atol": 512}),
    88: ("ew", "GELU (tanh form)", {"large": True, "special": ["nan", "inf", "-0"],
                                    "special_why": "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): NaN stays NaN, inf "
                                                   "gives inf, -0 gives 0; not -inf, whose NaN (-inf * 0) is an artefact"}),
    89: ("scan", "the cumulative sum"), 90: ("scan", "the cumulative product"),
    91: ("scan", "the reverse cumulative sum"), 92: ("scan", "the exclusive cumulative sum"),
    93: ("scan", "the masked cumulative sum"),
    94: ("loss", "the MSE loss"), 95: ("loss", "the cross-entropy loss"), 96: ("loss", "the Huber loss"),
    97: ("sdpa", "scaled dot-product attention"), 98: ("loss", "the KL-divergence loss"),
    99: ("loss", "the triplet margin loss"), 100: ("loss", "the hinge loss"),
}
for _n in range(54, 88):
    if _n not in L1:
        L1[_n] = ("conv", "the convolution")

# Level-1 params: name -> vary (and why); keyed by (problem number, param name).
EPS_VARY = vary([1e-05, 0.01, 1.0], "eps keeps the variance's square root away from 0 and must stay "
                                    "positive: it varies over positive values only")
DIM_FIXED = "the dim index is fixed by the layout (rows along the last dim) that the reference and every fixed set use"
L1_VARY = {
    (5, "s"): vary([-1.5, 0, 1000]),
    (20, "negative_slope"): vary([-0.5, 0, 1000]),
    (24, "dim"): vary([], DIM_FIXED),
    (31, "alpha"): vary([-0.5, 0, 1000]),
    (33, "eps"): EPS_VARY, (34, "eps"): EPS_VARY, (35, "eps"): EPS_VARY, (36, "eps"): EPS_VARY,
    (40, "eps"): EPS_VARY,
    (89, "dim"): vary([], DIM_FIXED), (90, "dim"): vary([], DIM_FIXED), (91, "dim"): vary([], DIM_FIXED),
    (92, "dim"): vary([], DIM_FIXED), (93, "dim"): vary([], DIM_FIXED),
    (96, "beta"): vary([0, 0.25, 1000], "beta is the threshold between the squared and the absolute "
                                        "branch: 0 (plain L1) or positive, never negative (PyTorch refuses it)"),
    (99, "margin"): vary([0.25, 2, 1000], "PyTorch's triplet_margin_loss requires margin > 0: small, "
                                          "larger and a large magnitude"),
    (99, "eps"): vary([-0.5, 0, 10], "eps is added to each difference before the norm: any sign; 10 as "
                                     "the large magnitude, since much larger values make the two distances "
                                     "nearly equal and their float32 difference noise"),
}

# Losses: (spike, large atol, special, special why, structure on?) by number.
LOSS = {
    94: {"spike": 1000, "large_atol": 10000, "special": ALL_SPECIAL,
         "special_why": "mean((p - t)^2) in double: NaN stays NaN, +-inf give inf, as torch's",
         "spike_why": "16 spikes of 1000 squared move the mean of 2^30 terms by ~1%, far past rtol",
         "large_why": "the squares of predictions x100 overflow a float32 sum of squares no sooner, but a kernel "
                      "that squares in a narrower type or rescales wrongly fails; the loss scales by ~100^2: atol x10^4"},
    95: {"spike": 1000, "large_atol": 100, "special": ["nan", "-inf", "-0"],
         "special_why": "log-sum-exp minus the target's logit in double: NaN makes its row's loss NaN, a -inf "
                        "logit adds nothing (inf loss when it is the target), as F.cross_entropy; not inf, "
                        "whose NaN (inf - inf after the max) is an artefact of the formula",
         "spike_why": "a logit of 1000 std in a row moves its loss by ~2000, the mean of 32768 rows by ~5%",
         "large_why": "logits x100 overflow exp without the max subtracted (x > 88); the loss grows like the "
                      "logit gaps: atol x100"},
    96: {"spike": 1000000, "large_atol": 100, "special": ALL_SPECIAL,
         "special_why": "|d| < beta ? d^2 / 2beta : |d| - beta/2 in double: NaN stays NaN, +-inf give inf, as torch's",
         "spike_why": "the absolute branch is linear: 32 spikes of 10^6 move the mean of 2^30 terms by ~0.3%, 25x rtol",
         "large_why": "differences x100 take the linear branch: the loss scales by ~100 (atol x100)"},
    98: {"on": False},
    99: {"spike": 1000, "large_atol": 100, "special": ["-0"],
         "special_why": "only -0 (acts as 0): the reference's clamp max(l, 0) drops a NaN or inf - inf where "
                        "PyTorch's keeps it",
         "spike_why": "a spike of 1000 in a positive row raises its distance by ~900, the mean by ~40%",
         "s_atol": 4, "struct_why": "each row's term is a difference of two distances, whose float32 "
                                    "rounding is relative to the distances (up to 8x larger under the "
                                    "scales), not to the term: atol x4 (PyTorch reached 0.46 of the "
                                    "tolerance at x1)",
         "large_why": "distances of inputs x100 square terms of 10^4 before the root; the loss scales by 100 "
                      "(atol x100)"},
    100: {"spike": 1000000, "large_atol": 100, "special": ["inf", "-inf", "-0"],
          "special_why": "max(1 - p t, 0): +-inf give inf or 0 as torch.clamp does; not NaN: the reference's "
                         "h > 0 ? h : 0 drops it where torch.clamp keeps it",
          "spike_why": "the hinge is linear: 8 of the 16 spikes of 10^6 add ~8e6 to a sum of ~1e9, 80x rtol",
          "large_why": "predictions x100: the loss scales by ~100 (atol x100)"},
}


def _capacity_l1(num, m, cat):
    d = m["dims"]["default"]
    first = next(iter(d))
    a = {first: ROWS}
    for k in d:  # the other data dims small: 33 on the last, 3 on the rest
        if k != first and k not in ("K", "S", "P", "DIL", "G"):
            a[k] = 3
    last = [k for k in d if k not in ("K", "S", "P", "DIL", "G")][-1]
    a[last] = 33
    if num == 35:
        a.update({"C": 6, "G": 3})
    if num == 33:  # the reference reduces a channel per block: 3 channels of 70001 x 3 x 33 took 66 ms
        a.update({"H": 1, "W": 7})
    if num == 42:
        a.update({"H": 9, "W": 9})
    sets = [a]
    big = None
    if cat == "ew":
        big = {first: 3, last: 800000011}
    elif cat in ("reduce", "argred"):
        big = {"B": 3, "D1": 8009, "D2": 100003}  # many output columns: the references walk D1 per column
    elif cat == "scan":
        big = {"B": 65539, "D": 32771}  # many rows: the references scan one row per block
    elif cat == "loss" and num != 99:  # 099: three 2^31-element inputs exceed 24 GiB
        # many rows, not 24 rows of 1e8: the references sum a row per block, and 24 blocks took
        # 35-164 ms a run on the H100 (every verification runs it)
        big = {"B": 65539, "C" if num == 95 else "D": 32771}
    if big:
        sets.append(big)
    return capacity(m, sets)


def level1(m):
    num = int(m["id"].split("/")[1][:3])
    entry = L1[num]
    cat, op = entry[0], entry[1]
    o = entry[2] if len(entry) > 2 else {}
    vals = _level1_values(num, m, cat, op, o)
    vr = {p["name"]: L1_VARY[(num, p["name"])] for p in m.get("params", [])}
    cap = None
    if cat in ("ew", "softmax", "norm", "reduce", "argred", "scan", "loss") or num in (41, 42, 44):
        cap = _capacity_l1(num, m, cat)
    return {"values": vals, "vary": vr, "capacity": cap}


def _level1_values(num, m, cat, op, o):
    if cat == "mm":
        return values(0, 0, OFF_HOMOGENEOUS.format(op=op), True, 0, 64, MATMUL_STRUCT.format(op=op),
                      ALL_SPECIAL, MATMUL_SPECIAL)
    if cat == "conv":
        return values(0, 0, OFF_HOMOGENEOUS.format(op=op), True, 0, o.get("struct_atol", 64),
                      (MATMUL_STRUCT if num != 86 else
                       "{op}: the depthwise sums take up to 8x from the input and from the depthwise weight, "
                       "the pointwise sums a further 8x from its weight, so float32 rounding near cancelling "
                       "outputs grows by up to 512x (atol x512; rtol covers the rest); no spikes: the "
                       "per-row and per-column scales already make a kernel that skips terms far off").format(op=op),
                      ["-0"], CONV_SPECIAL)
    if cat == "ew":
        if o.get("large"):
            lw = ("large inputs (x100, beyond 88) overflow an exp-based form of {op} written without care "
                  "(inf / inf or inf * 0 give NaN); the output is {b}, its rounding relative: atol unchanged").format(
                      op=op, b="bounded" if o.get("bounded") else "x or bounded")
            lg = (100, 1, lw)
        else:
            lg = (0, 0, o.get("large_why", OFF_HOMOGENEOUS.format(op=op)))
        return values(lg[0], lg[1], lg[2], True, 0, 1, ELEMENTWISE_STRUCT.format(op=op),
                      o.get("special", []), o.get("special_why",
                                                  "{op} is a product: NaN and +-inf propagate through it in the "
                                                  "reference as in PyTorch (inf * 0 = NaN either way), -0 acts as "
                                                  "0".format(op=op)))
    if cat == "softmax":
        log = num == 24
        return values(100, 100 if log else 1,
                      "inputs x100 overflow exp without the row max subtracted (x > 88); the output {}".format(
                          "is x - max - log(sum), scaled like x: atol x100" if log else "stays in [0, 1]: atol unchanged"),
                      True, 1000, 1,
                      "{op} is invariant to a row's offset and its rounding is relative to x - max, which rtol "
                      "follows under the scales (atol unchanged); spikes of 1000 std make their row's {w} a "
                      "kernel that samples the row misses".format(op=op, w="maximum dominate, so that"),
                      ["nan", "-inf", "-0"],
                      "NaN makes its row NaN, -inf gives {} at its place, -0 acts as 0, in the reference and in "
                      "PyTorch; not inf, whose all-NaN row (inf - inf after the max) is an artefact".format(
                          "-inf" if log else "0"))
    if cat == "norm":
        affine = o.get("affine")
        centred = num in (33, 34, 35, 40)  # subtracts the mean: a group's variance can be 0
        eps_note = "" if num in (37, 38, 39) else " (eps is negligible beside the variance)"
        spikes = ("no spikes: two spikes are equal (+-1000 std exactly), so a small group (the small "
                  "draws have groups of 2) holding two has a variance of exactly 0, where a one-pass "
                  "float32 variance (E[x^2] - E[x]^2, PyTorch's) leaves rounding of ~1e-7 x 10^6 that "
                  "1/sqrt(eps) blows up; the scales already make a kernel that samples the group wrong "
                  "by its variance" if centred else
                  "spikes of 1000 std move the statistics of their group by far more than the tolerance, "
                  "so a kernel that samples the group is wrong")
        return values(100, 100 if affine else 1,
                      "inputs x100 square to 10^4 per term in the statistics{}; the normalised output is "
                      "scale-invariant{}".format(
                          eps_note, ", the affine weight and bias (also x100) scale it by 100: atol x100"
                          if affine else ": atol unchanged"),
                      True, 0 if centred else 1000, 8 if affine else 4,
                      "{op}: per-row and per-column scales (with offsets) make the statistics' terms differ by "
                      "up to 64x, which float32 sums handle at relative precision; the output is normalised, its "
                      "rounding relative{a} (atol x{f} for outputs near 0); {s}".format(
                          op=op, a=" and scaled up to 8x by the affine weight" if affine else "",
                          f=8 if affine else 4, s=spikes),
                      ["nan", "-0"],
                      "a NaN makes the statistics of its group NaN and so every output of the group, in the "
                      "reference's double sums as in PyTorch's; -0 acts as 0; not +-inf, whose NaN (inf - inf, "
                      "inf / inf) is an artefact of the formulas")
    if cat == "reduce":
        return values(0, 0, OFF_HOMOGENEOUS.format(op=op), True, 100, 16,
                      "{op}: every term of a reduced fibre shares the fibre's row and column scale (up to 8x) "
                      "and offset, so float32 rounding near cancelling sums grows by up to 8x (atol x16 with "
                      "margin); spikes of 100 std change the sums of their fibres by more than the typical "
                      "sum, so a kernel that samples dim 1 is wrong".format(op=op),
                      ALL_SPECIAL, "double sums: NaN stays NaN, inf and -inf give +-inf and NaN together, as "
                                   "torch's; -0 acts as 0")
    if cat == "argred":
        arg = num in (51, 52)
        return values(0, 0, OFF_HOMOGENEOUS.format(op=op), True, 0 if arg else 100, 1,
                      "{op} is exact (a comparison), so the scales cannot cost precision (atol unchanged); "
                      "{s}".format(op=op, s=(
                          "no spikes: two equal spikes (+-100 std exactly) in a fibre would tie, and which "
                          "index wins a tie is not what this problem checks; a kernel that samples dim 1 "
                          "misses the fibre's extreme about half the time anyway" if arg else
                          "spikes of 100 std exceed every scaled value, so they decide their fibres and a "
                          "kernel that samples dim 1 misses them")),
                      o.get("special", ALL_SPECIAL),
                      o.get("special_why", "the reference follows PyTorch's max/min: a NaN wins and stays, "
                                           "+-inf are ordinary extremes, -0 ties +0"))
    if cat == "maxpool":
        return values(0, 0, OFF_HOMOGENEOUS.format(op=op), True, 0, 1,
                      "{op} is exact (a comparison over a small window), so the scales cannot cost precision "
                      "(atol unchanged); no spikes: every output reads its own window".format(op=op),
                      ALL_SPECIAL, "the reference follows PyTorch's max pooling: a NaN in a window wins, +-inf "
                                   "are ordinary extremes, padding never is; -0 ties +0")
    if cat == "avgpool":
        return values(0, 0, OFF_HOMOGENEOUS.format(op=op), True, 0, 16,
                      "{op}: a window's terms take row and column scales of up to 8x, so float32 rounding "
                      "near cancelling averages grows by up to 8x (atol x16 with margin); no spikes: every "
                      "output reads its own small window".format(op=op),
                      ALL_SPECIAL, "window sums in double: NaN stays NaN, +-inf give +-inf (NaN together), "
                                   "as PyTorch's; -0 acts as 0")
    if cat == "scan":
        return values(0, 0, "x is drawn from uniform, which a large-magnitude run does not scale", False, 0, 0,
                      "x is drawn from uniform{}, which structured runs do not shape (only normal and "
                      "uniform_fan_in inputs are): the tolerance relies on the positive terms".format(
                          " near 1 (products stay informative)" if num == 90 else " (positive terms)"),
                      [], "x is drawn from uniform, which the special run does not touch (normal inputs only)")
    if cat == "sdpa":
        return values(10, 10, "Q and K x10 make scores x100, which overflow exp without the running max "
                              "subtracted; the output (weights times V, also x10) scales by 10: atol x10",
                      True, 100, 8,
                      "scores take up to 64x from the row and column scales of Q and K, sharpening the softmax; "
                      "its rounding stays relative (outputs near 0, averages of V, get atol x8); spikes of 100 "
                      "std make single keys dominate, so a kernel that samples keys is wrong",
                      ["nan", "-0"],
                      "a NaN in Q makes its query's row NaN, in K or V every query's, through the reference's "
                      "double products and sums as through PyTorch's; -0 acts as 0; not +-inf (inf - inf after "
                      "the max: an artefact)")
    if cat == "loss":
        lo = LOSS[num]
        if not lo.get("on", True):
            return values(0, 0, "predictions and targets are probability rows (simplex), which a "
                                "large-magnitude run does not scale",
                          False, 0, 0, "predictions and targets are probability rows (simplex): per-row and "
                                       "per-column scales or offsets would leave the simplex, and structured runs "
                                       "shape only normal and uniform_fan_in inputs",
                          [], "the inputs are probability rows: no NaN, inf or -0 belongs in them")
        return values(100, lo["large_atol"], lo["large_why"], True, lo["spike"], lo.get("s_atol", 1),
                      "{op}: {w}; {s}".format(op=op, s=lo["spike_why"], w=lo.get(
                          "struct_why", "a mean of non-negative terms, so float32 rounding stays relative "
                                        "under the scales (atol unchanged)")),
                      lo["special"], lo["special_why"])
    raise ValueError(cat)


# ---------------------------------------------------------------- attention

def attention(m):
    """Every attention problem: softmax-like (large 10, spikes 100), -0 only."""
    bf = {"bf16": "bf16", "f16": "fp16", "f32": "fp32"}[m["inputs"][0]["dtype"]]
    s_atol = 8 if bf == "fp32" else 4
    vals = values(10, 10, "q and k x10 make the scores x100, which overflow exp without the running "
                          "max subtracted (scores > 88); the output, weights times v (also x10), scales by "
                          "10: atol x10",
                  True, 100, s_atol,
                  "scores take up to 64x from the per-row (batch) and per-column (feature) scales of q and "
                  "k, sharpening the softmax; the {} rounding of the weights stays relative, outputs near 0 "
                  "(averages of v) get atol x{}; spikes of 100 std make single keys dominate, so a kernel "
                  "that samples or skips keys it must score is wrong".format(bf, s_atol),
                  ["-0"],
                  "only -0 (acts as 0): a NaN or inf in a key or value that a mask hides reaches the output "
                  "of PyTorch's dense attention (0 * NaN) but not of its flash kernels, which skip the "
                  "masked tiles: the operator defines no result for them")
    vr = {}
    for p in m.get("params", []):
        assert p["name"] == "softcap", p
        vr["softcap"] = vary([3, 10, 1000], "the cap c in c * tanh(s / c) is positive: 0 divides by "
                                            "zero and -c gives the same scores as c; 1000 barely caps")
    return {"values": vals, "vary": vr, "capacity": None}


# ---------------------------------------------------------------- level 2

LEAD_PHRASE = {"linear": "Linear", "conv2d": "Conv2d", "conv3d": "Conv3d",
               "convT2d": "ConvTranspose2d", "convT3d": "ConvTranspose3d"}


def _chain_kinds(spec):
    """The chain's op kinds: softmax, lse, norm, reduce, maxred, pool, relu-like (fmax/fmin/clamp)."""
    import level2_ops as g
    kinds = set()
    for op in spec["chain"]:
        if isinstance(op, g.Softmax):
            kinds.add("softmax")
        elif isinstance(op, g.Reduce):
            kinds.add({"lse": "lse", "max": "maxred", "min": "maxred"}.get(op.kind, "reduce"))
        elif isinstance(op, g.Norm):
            kinds.add("norm")
        elif isinstance(op, g.Pool):
            kinds.add("maxred" if op.kind == "max" else "pool")
        elif isinstance(op, g.Ew):
            if "fmax" in op.stmt or "fmin" in op.stmt or "l2_clamp" in op.stmt:
                kinds.add("dropsnan")
        elif isinstance(op, g.Linear2):
            kinds.add("linear2")
    return kinds


# KC_VARY_PROBE=1 (tools/baselines/calibrate_values.py's runs): every free constant takes the
# candidate magnitudes at once, to measure which large magnitude the tolerance absorbs.
PROBE = __import__("os").environ.get("KC_VARY_PROBE") == "1"


# Where the output scales with a constant, atol does not: the large magnitude is the largest of
# 100, 10 and 4 that keeps PyTorch's float32 operator within half the tolerance
# (tools/baselines/calibrate_values.py with KC_VARY_PROBE=1, on the H200, 2026-11-27: the worst
# |d|/tol at 4, 10 and 100 is noted). Each entry: param -> vary, why.
SMALLER = "{} as the large magnitude: the output scales with it while atol does not ({})"
L2_VARY = {
    12: {"multiplier": vary([-1.5, 0, 4], SMALLER.format(4, "PyTorch at 4/10/100: 0.57/2.9/180 with the slope alike")),
         "negative_slope": vary([-1.5, 0, 0.5], "multiplies the multiplier on the negative side: 0.5 keeps "
                                               "their product (the output's scale) within what atol absorbs")},
    14: {"scaling_factor": vary([-1.5, 0, 4], SMALLER.format(4, "PyTorch at 4/10/100: 0.24/0.55/3.2"))},
    31: {"constant_value": vary([-1.5, 0, 10]),
         "scaling_factor": vary([-1.5, 0, 10], SMALLER.format(10, "PyTorch at 10/100: 0.06/0.64"))},
    40: {"scaling_factor": vary([-1.5, 0, 4], SMALLER.format(4, "PyTorch at 4/10/100: 0.21/0.41/3.3"))},
    50: {"scale1": vary([-1.5, 0, 10], SMALLER.format(10, "scale1 x scale2 at 10/100: 0.14/9.3")),
         "scale2": vary([-1.5, 0, 10], SMALLER.format(10, "scale1 x scale2 at 10/100: 0.14/9.3"))},
    53: {"scaling_factor": vary([-1.5, 0, 10], SMALLER.format(10, "PyTorch at 10/100: 0.06/3.5"))},
    62: {"negative_slope": vary([-0.5, 0, 1], "slopes of magnitude 1 at most: the normalised outputs' "
                                              "float32 rounding already uses half of atol at slope -1.5 "
                                              "(PyTorch 0.53; 2.4 at 10)")},
    73: {"scaling_factor": vary([-1.5, 0, 10], SMALLER.format(10, "PyTorch at 10/100: 0.13/1.6"))},
    86: {"divisor": vary([-10, 4, 100], "a divisor: not 0, and |divisor| >= 4: a smaller one scales the "
                                        "output past the tight atol (PyTorch at 0.25/-1.5/100: 4.3/0.78/0.02)")},
}


def _level2_vary(spec):
    """Per param, by its use in the chain: eps positive; a divisor non-zero; clamp bounds as ordered
    pairs; additive and multiplicative constants any sign, zero and a large magnitude (L2_VARY
    where the tolerance does not absorb 100)."""
    import level2_ops as g
    stmts = [op.stmt for op in spec["chain"] if isinstance(op, g.Ew)]
    out = {}
    for p in spec.get("params", []):
        n = p["name"]
        if not PROBE and n in L2_VARY.get(spec["id"], {}):
            out[n] = L2_VARY[spec["id"]][n]
            continue
        uses = [s for s in stmts if __import__("re").search(r"\b%s\b" % n, s)]
        divisor = any(__import__("re").search(r"/\s*%s\b" % n, s) for s in uses)
        clamp_lo = any(__import__("re").search(r"l2_clamp\(v, %s," % n, s) for s in uses)
        clamp_hi = any(__import__("re").search(r"l2_clamp\(v, \w+, %s\)" % n, s) for s in uses)
        if n == "eps":
            out[n] = EPS_VARY
        elif n == "dropout_p":
            out[n] = vary([], "not used by the math: the dropout_mask input holds p (0 or 1/(1 - p)), "
                              "so a varied p would change nothing")
        elif clamp_lo:
            out[n] = vary([-1.5, 0, -100], "the lower clamp bound, varied with the upper one as ordered "
                                           "pairs (-1.5, -0.5), (0, 2), (-100, 100)")
        elif clamp_hi:
            out[n] = vary([-0.5, 2, 100], "the upper clamp bound, varied with the lower one as ordered "
                                          "pairs (-1.5, -0.5), (0, 2), (-100, 100)")
        elif PROBE and not divisor:
            out[n] = vary([-1.5, 0, 4, 10, 100])
        elif divisor:
            out[n] = vary([-1.5, 0.25, 100], "a divisor: any sign and magnitude but not 0")
        elif spec["id"] == 3 and n == "sum_weight":
            out[n] = vary([-1.5, 0, 10], "a shift that the LayerNorm after it removes; 10 as the large "
                                         "magnitude, since float32 loses the convolution output's low bits "
                                         "under a much larger shift before the normalisation")
        else:
            out[n] = vary([-1.5, 0, 100])
    return out


# Level-2 chains with a softmax whose outputs have an absolute tolerance far below rtol: their
# structured and large runs move the logits' float32 rounding (relative to the logits) into the
# weights, relative errors past rtol where a weight is large: atol rises to a fraction of rtol.
def level2(spec):
    kinds = _chain_kinds(spec)
    lead = spec["lead"]["kind"]
    lp = LEAD_PHRASE[lead]
    tol = spec["tolerance"]
    softmax_like = kinds & {"softmax", "lse"}
    norm = "norm" in kinds
    # large
    if softmax_like or norm:
        what = []
        if "softmax" in kinds:
            what.append("the softmax's exp overflows without the max subtracted (logits > 88)")
        if "lse" in kinds:
            what.append("the log-sum-exp's exp overflows without the max subtracted (values > 88)")
        if norm:
            what.append("the norm's statistics square terms of ~10^4")
        l_atol = 100
        if "softmax" in kinds:
            l_atol = max(100, int(round(10 * tol["rtol"] / tol["atol"])))
        large = (10, l_atol, "inputs and weights x10 make the {} output x100: {}; outputs that follow "
                             "it linearly scale by up to 100 (atol x{})".format(lp, "; ".join(what), l_atol))
    else:
        large = (0, 0, "the chain after the {} has no softmax, log-sum-exp or norm: magnitude only "
                       "scales it, which the structured runs cover".format(lp))
    # structure
    s_atol = 64
    s_extra = ""
    if "softmax" in kinds:
        s_atol = max(64, int(round(4 * tol["rtol"] / tol["atol"])))
        if s_atol > 64:
            s_extra = ("; the softmax turns the logits' rounding (relative to logits up to 64x larger) "
                       "into relative errors of its weights of a few rtol, which atol x{} absorbs for "
                       "weights up to 1".format(s_atol))
    inner = "IN" if lead == "linear" else "the input channels and the kernel window"
    s_why = ("the {} sums over {} products that take a scale of up to 8x from the input and from the "
             "weight (per-row and per-column scales), so float32 rounding near cancelling outputs grows "
             "by up to 64x (atol x64){}; no spikes: the leading op mixes every input element into many "
             "outputs, and the scales already make a kernel that skips or samples terms far off").format(
                 lp, inner, s_extra)
    # special
    if lead != "linear":
        special, sp_why = ["-0"], CONV_SPECIAL
    elif "dropsnan" in kinds:
        special = ["-0"]
        sp_why = ("only -0 (acts as 0): the chain's ReLU, min/max with a constant or clamp is fmax/fmin "
                  "in the reference, which drops a NaN where PyTorch keeps it; +-inf become inf - inf in "
                  "the GEMM's sums, an order-dependent artefact")
    else:
        special = ["nan", "-0"]
        sp_why = ("NaN propagates through the GEMM's products and sums and through every op of the chain "
                  "(the reference's reductions and pools keep NaN as PyTorch's do), -0 acts as 0; not "
                  "+-inf, which meet as inf - inf in the GEMM's sums")
    vals = values(large[0], large[1], large[2], True, 0, s_atol, s_why, special, sp_why)
    return {"values": vals, "vary": _level2_vary(spec), "capacity": None}

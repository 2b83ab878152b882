"""kcproblems: reading kc-problem v1 manifests from Python for the GPU-machine
tools (cross-check, baselines): dim expressions, derived dims, the torch
reference's Model, and inputs drawn with the manifest's distributions."""
import json
import math
import os
import re

DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
          "i32": "int32", "i64": "int64", "u8": "uint8", "bool": "bool"}


def eval_dim_expr(expr, dims):
    """Integer expressions of the manifest: + - * / % cdiv min max; C semantics for /."""
    if isinstance(expr, int):
        return expr
    tokens = re.findall(r"\d+|[A-Za-z_]\w*|[-+*/%(),]", str(expr))
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def primary():
        t = take()
        if t == "(":
            v = total()
            take()
            return v
        if t == "-":
            return -primary()
        if t.isdigit():
            return int(t)
        if peek() == "(":
            take()
            a = total()
            take()
            b = total()
            take()
            if t == "cdiv":
                return -(-a // b) if (a >= 0) == (b > 0) else int(a / b)
            return min(a, b) if t == "min" else max(a, b)
        return dims[t]

    def product():
        v = primary()
        while peek() in ("*", "/", "%"):
            op, r = take(), primary()
            if op == "*":
                v *= r
            elif op == "/":
                v = int(v / r)
            else:
                v = int(math.fmod(v, r))
        return v

    def total():
        v = product()
        while peek() in ("+", "-"):
            v = v + product() if take() == "+" else v - product()
        return v

    return total()


def load_manifest(path):
    with open(path) as f:
        return json.load(f)


def dims_sets(m):
    """[(name, dims)] for default, small, alt0.. with derived dims applied."""
    sets = [("default", m["dims"]["default"]), ("small", m["dims"]["small"])]
    sets += [("alt%d" % i, d) for i, d in enumerate(m["dims"]["alt"])]
    out = []
    for name, d in sets:
        d = dict(d)
        for k, e in m.get("derived", {}).items():
            d[k] = eval_dim_expr(e, d)
        out.append((name, d))
    return out


def shape_of(t, dims):
    return [eval_dim_expr(e, dims) for e in t["shape"]]


def tensor_bytes(m, dims):
    size = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4, "i64": 8, "u8": 1, "bool": 1}
    total = 0
    for t in m["inputs"] + m["outputs"]:
        n = 1
        for e in shape_of(t, dims):
            n *= e
        total += n * size[t["dtype"]]
    return total


def make_model(m, dims, torch):
    ns = {}
    exec(compile(m["torch_reference"], m["id"] + ":torch_reference", "exec"), ns)
    kwargs = dict(dims)
    for p in m.get("params", []):
        kwargs[p["name"]] = int(p["value"]) if p["dtype"] in ("i32", "i64") else p["value"]
    return ns["Model"](**kwargs)


def segment_lengths(L, n):
    """dist segments: the n + 1 document lengths of a row of length L (any order; some may be 0)."""
    tri = n * (n + 1) // 2
    dc = L // tri
    return [dc * (d + 1) for d in range(n)] + [L - dc * tri]


def segment_ids(shape, n, torch, device="cuda", generator=None):
    """Rows along the last dim pack the documents of segment_lengths in a random order; ids number
    the non-empty ones 0, 1, 2, ... (the harness draws the order with Philox instead)."""
    rows = 1
    for e in shape[:-1]:
        rows *= e
    L = shape[-1] if shape else 1
    lens = segment_lengths(L, n)
    out = torch.empty((rows, L), dtype=torch.int64)
    for r in range(rows):
        order = torch.randperm(n + 1)
        pos = 0
        ids = [l for l in (lens[int(o)] for o in order) if l > 0]
        for i, l in enumerate(ids):
            out[r, pos:pos + l] = i
            pos += l
    return out.view(shape).to(device)


def random_inputs(m, dims, torch, device="cuda", generator=None):
    """Inputs with the manifest's distributions (not bit-identical to the harness's Philox)."""
    out = []
    for t in m["inputs"]:
        shape = shape_of(t, dims)
        dt = getattr(torch, DTYPES[t["dtype"]])
        init = t["init"]
        dist = init["dist"]
        if dist == "normal":
            x = torch.randn(shape, device=device, generator=generator) * init.get("std", 1) + init.get("mean", 0)
        elif dist == "uniform":
            lo, hi = init.get("lo", 0), init.get("hi", 1)
            x = torch.rand(shape, device=device, generator=generator) * (hi - lo) + lo
        elif dist == "randint":
            lo, hi = eval_dim_expr(init["lo"], dims), eval_dim_expr(init["hi"], dims)
            x = torch.randint(lo, hi, shape, device=device, generator=generator)
        elif dist == "sign":
            x = torch.randint(0, 2, shape, device=device, generator=generator) * 2 - 1
        elif dist == "simplex":
            x = torch.softmax(torch.randn(shape, device=device, generator=generator) * init.get("std", 1), dim=-1)
        elif dist == "uniform_fan_in":  # PyTorch's Linear/Conv default init
            bound = 1.0 / math.sqrt(eval_dim_expr(init["fan_in"], dims))
            x = (torch.rand(shape, device=device, generator=generator) * 2 - 1) * bound
        elif dist == "constant":
            x = torch.full(shape, float(init["value"]), device=device)
        elif dist == "bernoulli":  # a dropout mask: 0 with probability p, else 1/(1-p)
            p = init["p"]
            x = (torch.rand(shape, device=device, generator=generator) >= p).to(torch.float32) / (1 - p)
        elif dist == "segments":  # sorted document ids along the last dim (see segment_ids)
            x = segment_ids(shape, eval_dim_expr(init["count"], dims), torch, device, generator)
        else:
            raise ValueError("unknown dist " + dist)
        out.append(x.to(dt))
    return out


def problem_manifests(root, suite):
    d = os.path.join(root, suite)
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".json"))

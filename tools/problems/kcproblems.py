"""kcproblems: reading kc-problem v1 manifests from Python for the GPU-machine
tools (cross-check, baselines): dim expressions, derived dims, the torch
reference's Model (for level 3, KernelBench's own Model run as the manifest's
torch_model says, its parameters loaded from the packed input's views), and
inputs drawn with the manifest's distributions."""
import json
import math
import os
import re

SIZES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4, "i64": 8, "u8": 1, "bool": 1}
VIEW_ALIGN_BYTES = 256  # problem.h KC_VIEW_ALIGN_BYTES
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


def numel(shape):
    n = 1
    for e in shape:
        n *= e
    return n


def view_layout(t, dims):
    """A packed input's views as [(view, offset, numel)] and its total element count: in order,
    each starting at a multiple of 256 bytes (common/problem.c layout_views)."""
    align = VIEW_ALIGN_BYTES // SIZES[t["dtype"]]
    off, out = 0, []
    for v in t["views"]:
        n = numel(shape_of(v, dims))
        out.append((v, off, n))
        off += -(-n // align) * align
    return out, off


def shape_of(t, dims):
    if "views" in t:  # a packed input: one dim, the padded total
        return [view_layout(t, dims)[1]]
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


def _py_env(m, dims):
    env = dict(dims)
    for p in m.get("params", []):
        env[p["name"]] = int(p["value"]) if p["dtype"] in ("i32", "i64") else p["value"]
    env["cdiv"] = lambda a, b: -(-a // b)
    return env


def torch_keys(key, count, env):
    """A view's "torch": one state-dict key ({expr} over the dims allowed), or, when an {expr}
    uses i, one per index i of the view's first dim (a stack of identical layers)."""
    sub = lambda i: re.sub(r"\{([^}]*)\}", lambda g: str(eval(g.group(1), {"__builtins__": {}}, dict(env, i=i))), key)
    if not any(re.search(r"\bi\b", e) for e in re.findall(r"\{([^}]*)\}", key)):
        return [sub(0)]
    return [sub(i) for i in range(count)]


def make_kernelbench_model(m, dims, torch):
    """Level 3: KernelBench's own Model (torch_reference) built as torch_model says, wrapped so
    that forward(*inputs in manifest order) loads the packed input's views into its parameters
    (by their torch keys, which must cover every parameter) and calls Model.forward on the
    inputs torch_model names. Training mode, as KernelBench runs it (BatchNorm on batch
    statistics)."""
    tm = m["torch_model"]
    env = _py_env(m, dims)
    ns = {"__name__": "kernelbench_level3"}
    exec(compile(m["torch_reference"], m["id"] + ":torch_reference", "exec"), ns)
    for k, e in tm.get("globals", {}).items():
        ns[k] = eval(e, {"__builtins__": {}}, env)
    model = ns["Model"](*[eval(e, {"__builtins__": {}}, env) for e in tm["init"]])
    names = [t["name"] for t in m["inputs"]]
    forward_at = [names.index(n) for n in tm["forward"]]
    params = dict(model.named_parameters())
    plan, seen = [], set()
    for i, t in enumerate(m["inputs"]):
        if "views" not in t:
            continue
        layout, _ = view_layout(t, dims)
        for v, off, n in layout:
            if "torch" not in v:
                continue
            vshape = shape_of(v, dims)
            keys = torch_keys(v["torch"], vshape[0] if vshape else 1, env)
            per = n // len(keys) if keys else 0
            for j, key in enumerate(keys):
                if key not in params:
                    raise KeyError("%s: view %s names %s, not a parameter of Model (%s)" % (m["id"], v["name"], key, ", ".join(params)))
                if params[key].numel() != per:
                    raise ValueError("%s: view %s holds %d elements for %s of shape %s" % (m["id"], v["name"], per, key, tuple(params[key].shape)))
                if key in seen:
                    raise ValueError("%s: parameter %s is in two views" % (m["id"], key))
                seen.add(key)
                plan.append((i, off + j * per, per, key))
    missing = [k for k in params if k not in seen]
    if missing:
        raise ValueError("%s: parameters in no view: %s" % (m["id"], ", ".join(missing)))
    outputs = tm.get("outputs")

    class KernelBenchRun(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def load_views(self, *inputs):
            """Copies the packed inputs' views into the Model's parameters."""
            now = dict(self.model.named_parameters())
            with torch.no_grad():
                for i, off, n, key in plan:
                    now[key].copy_(inputs[i][off:off + n].view(now[key].shape))

        def model_inputs(self, inputs):
            """The inputs KernelBench's forward takes (torch_model's forward), in its order."""
            return [inputs[k] for k in forward_at]

        def forward(self, *inputs):
            self.load_views(*inputs)
            out = self.model(*self.model_inputs(inputs))
            if outputs:
                out = eval(outputs, {"__builtins__": {}}, dict(env, out=out))
            return out

    return KernelBenchRun()


def baseline_call(model, m, inputs):
    """What a PyTorch baseline times: (module, args). Level 3 (torch_model): KernelBench's own
    Model on the inputs its forward takes, the packed input's views loaded into its parameters
    once beforehand (the weights are the Model's state in KernelBench, not an input copied on
    every call); otherwise the model (make_model) on all the inputs."""
    if "torch_model" not in m:
        return model, inputs
    model.load_views(*inputs)
    return model.model, model.model_inputs(inputs)


def varied(t):
    """t with a constant init replaced by its "vary" (the verifier's tensor_spec_varied: every
    seed but the first and the drawn dims fill constants so); a packed input's views each so."""
    if "views" in t:
        return dict(t, views=[varied(v) for v in t["views"]])
    init = t.get("init", {})
    return dict(t, init=init["vary"]) if "vary" in init else t


def describe_inputs(m, dims):
    """The inputs at dims as text lines, without torch: name, dtype, shape, elements; for a
    packed input its views, how many parameter tensors and elements they hold (a stacked view
    counts one tensor per layer) and the NaN padding between them."""
    env = _py_env(m, dims)
    lines = []
    for t in m["inputs"]:
        shape = shape_of(t, dims)
        n = numel(shape)
        line = "%s %s %s: %d elements, %.1f MB" % (t["name"], t["dtype"], shape, n, n * SIZES[t["dtype"]] / 1e6)
        if "views" in t:
            layout, total = view_layout(t, dims)
            held = sum(c for v, _, c in layout if "torch" in v)
            tensors = sum(len(torch_keys(v["torch"], (shape_of(v, dims) or [1])[0], env))
                          for v, _, _ in layout if "torch" in v)
            line += "; packed: %d views holding %d parameter tensors, %d parameter elements, %d padding" % (
                len(layout), tensors, held, total - sum(c for _, _, c in layout))
        else:
            line += "; init %s" % t["init"]["dist"]
        lines.append(line)
    return lines


def describe_model(m, dims):
    """How the tools build and call the PyTorch model at dims, as one line (no torch)."""
    env = _py_env(m, dims)
    if "torch_model" not in m:
        args = ", ".join("%s=%s" % kv for kv in sorted(env.items()) if kv[0] != "cdiv")
        return "Model(%s)(%s)" % (args, ", ".join(t["name"] for t in m["inputs"]))
    tm = m["torch_model"]
    py = lambda e: eval(e, {"__builtins__": {}}, env)
    shown = lambda v: repr(v) if len(repr(v)) <= 60 else repr(v)[:57] + "..."
    glob = ", ".join("%s=%s" % (k, shown(py(e))) for k, e in tm.get("globals", {}).items())
    init = ", ".join(shown(py(e)) for e in tm["init"])
    return "KernelBench Model(%s).forward(%s)%s [module globals: %s]" % (
        init, ", ".join(tm["forward"]), " -> " + tm["outputs"] if tm.get("outputs") else "", glob or "none")


def make_model(m, dims, torch):
    if "torch_model" in m:
        return make_kernelbench_model(m, dims, torch)
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
        if "views" in t:  # a packed input: NaN padding, each view drawn by its init
            x = torch.full(shape, float("nan"), device=device, dtype=dt)
            layout, _ = view_layout(t, dims)
            for v, off, n in layout:
                one = random_inputs({"inputs": [dict(v, dtype=t["dtype"])]}, dims, torch, device, generator)[0]
                x[off:off + n] = one.flatten()
            out.append(x)
            continue
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

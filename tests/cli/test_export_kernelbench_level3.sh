#!/bin/sh
# test_export_kernelbench_level3: kexport --format kernelbench on level-3 problems (KernelBench's
# whole networks: the parameters one packed input with views, torch_reference KernelBench's own
# source run as the manifest's torch_model says). The kernels are level-3 references imported
# with kverify import: 003 (stacked views walked by a @for loop; L = 1 at alt1 leaves the stack
# empty), 008 ResNet basic block (BatchNorm views with constant inits), 029 Swin-MLP (137
# views, a source with a line continuation) and 035 LSTM (forward takes x, h0, c0). Checks, without torch
# (tests/cli/fake_torch.py stands in for the module's imports and input drawing):
# KERNELBENCH_SOURCE and TORCH_MODEL are the manifest's; VIEWS are its views, their offsets
# (the loader's, as the host wrapper uses them) and the packed size agree with
# tools/problems/kcproblems.py at every dims set, and so do the views' torch keys, TORCH_MODEL's
# expressions and the plan that loads views into parameters (with its refusals: a parameter in no
# view, one of the wrong size); get_inputs() draws the packed input NaN outside its views and
# each view by its init (but 029's 19M parameters: too slow without torch); ModelNew's dims from the input shapes, refusing a packed input of the
# wrong size; the record carries the module; with nvcc, two CUDA sources compile against the
# PyTorch stub. Running the modules needs a GPU and torch: tests/gpu/test_datasets.sh.
set -eu
. "$(dirname "$0")/lib.sh"

PROBLEMS="003_deep_narrow_mlp 008_resnet_basic_block 029_swin_mlp 035_lstm"
for p in $PROBLEMS; do
    "$KC_BIN/kverify" problems --show-reference "level3/$p" >"$T/$p.cu" || fail "show-reference $p"
    "$KC_BIN/kverify" import --db "$T/kc.db" --problem "level3/$p" "$T/$p.cu" >/dev/null ||
        fail "import $p"
done
"$KC_BIN/kcurate" run --db "$T/kc.db" >/dev/null
"$KC_BIN/kexport" --db "$T/kc.db" --out "$T/kb" --format kernelbench --verdict any \
    --split train,valid,test,heldout >"$T/out" 2>"$T/err" || fail "kexport: $(cat "$T/err")"
grep -q '^exported 4 kernelbench records' "$T/out" || fail "expected 4 records: $(cat "$T/out")"
"$KC_BIN/kc_jsontypes" "$T/kb"/*.jsonl.gz >/dev/null || fail "kernelbench records change types"

if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 absent: modules not checked"
    exit 0
fi
export PYTHONDONTWRITEBYTECODE=1
python3 - "$T" $PROBLEMS <<'PY' || fail "module checks failed"
import ast, glob, gzip, json, math, os, sys

T, problems = sys.argv[1], sys.argv[2:]
sys.path.insert(0, os.path.join(os.environ["KC_ROOT"], "tools", "problems"))
sys.path.insert(0, os.path.join(os.environ["KC_ROOT"], "tests", "cli"))
import fake_torch
import kcproblems

fake_torch.install()
ok = True


def bad(msg):
    global ok
    ok = False
    print("FAIL:", msg)


class FakeParam:
    def __init__(self, n):
        self.n, self.shape = n, (n,)

    def numel(self):
        return self.n


class FakeModel:
    def __init__(self, params):
        self.params = params

    def named_parameters(self):
        return list(self.params.items())


def expected_plan(m, dims):
    """(input index, first element, count, key) as kcproblems lays the views out."""
    env = kcproblems._py_env(m, dims)
    plan = []
    for i, t in enumerate(m["inputs"]):
        if "views" not in t:
            continue
        layout, _ = kcproblems.view_layout(t, dims)
        for v, off, n in layout:
            if "torch" not in v:
                continue
            shape = kcproblems.shape_of(v, dims)
            keys = kcproblems.torch_keys(v["torch"], shape[0] if shape else 1, env)
            per = n // len(keys) if keys else 0
            plan += [(i, off + j * per, per, k) for j, k in enumerate(keys)]
    return plan


records = {}
for f in glob.glob(os.path.join(T, "kb", "*.jsonl.gz")):
    for line in gzip.open(f, "rt"):
        r = json.loads(line)
        records[r["path"]] = r

for p in problems:
    path = glob.glob(os.path.join(T, "kb", "kernelbench", "level3", p, "c*.py"))[0]
    text = open(path).read()
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        bad("%s does not parse: %s" % (path, e))
        continue
    rel = os.path.relpath(path, os.path.join(T, "kb"))
    if rel not in records or records[rel]["code"] != text:
        bad("%s: the record does not carry the module's text" % p)
    m = kcproblems.load_manifest(os.path.join(os.environ["KC_PROBLEMS"], "level3", p + ".json"))
    ns = {"__name__": "kb_" + p}
    exec(compile(text, path, "exec"), ns)
    for want in ("Model", "ModelNew", "get_inputs", "get_init_inputs"):
        if want not in ns:
            bad("%s: no %s" % (p, want))
    if "_Reference" in ns:
        bad("%s: KernelBench's source ran at the module's top level" % p)
    if ns["KERNELBENCH_SOURCE"] != m["torch_reference"]:
        bad("%s: KERNELBENCH_SOURCE is not the manifest's torch_reference" % p)
    if ns["TORCH_MODEL"] != m["torch_model"]:
        bad("%s: TORCH_MODEL %r, manifest %r" % (p, ns["TORCH_MODEL"], m["torch_model"]))
    if ns["get_init_inputs"]() != []:
        bad("%s: get_init_inputs is not []" % p)
    packed = [t for t in m["inputs"] if "views" in t]
    got_views = {k: [(v[0], v[1], v[3]) for v in vs] for k, vs in ns["VIEWS"].items()}
    want_views = {t["name"]: [(v["name"], [str(e) for e in v["shape"]], v.get("torch"))
                              for v in t["views"]] for t in packed}
    if got_views != want_views:
        bad("%s: VIEWS differ from the manifest's views" % p)
    e = ns["_expr"]
    for name, dims in kcproblems.dims_sets(m):
        d = ns["_all_dims"](ns["DIMS_SETS"][name])
        if d != dims:
            bad("%s %s: dims %s, manifest %s" % (p, name, d, dims))
            continue
        env = kcproblems._py_env(m, dims)
        for t in packed:
            layout, total = kcproblems.view_layout(t, dims)
            row = [r for r in ns["INPUTS"] if r[0] == t["name"]][0]
            if [e(x, d) for x in row[2]] != [total]:
                bad("%s %s: packed size %s, kcproblems %d" % (p, name, row[2], total))
            for (v, off, n), mine in zip(layout, ns["VIEWS"][t["name"]]):
                if e(mine[4], d) != off:
                    bad("%s %s: view %s at %d, kcproblems %d" % (p, name, v["name"], e(mine[4], d), off))
                shape = kcproblems.shape_of(v, dims)
                count = shape[0] if shape else 1
                if ns["_torch_keys"](mine[3], count, ns["_env"](d)) != kcproblems.torch_keys(v["torch"], count, env):
                    bad("%s %s: view %s's torch keys differ" % (p, name, v["name"]))
        py = lambda x: eval(x, {"__builtins__": {}}, env)
        tm = ns["TORCH_MODEL"]
        for x in list(tm.get("globals", {}).values()) + tm["init"]:
            if ns["_py"](x, ns["_env"](d)) != py(x):
                bad("%s %s: TORCH_MODEL expression %r" % (p, name, x))
        # the plan that loads views into parameters, on a model whose parameters are the keys
        want = expected_plan(m, dims)
        params = {k: FakeParam(n) for _, _, n, k in want}
        try:
            got = ns["_view_plan"](FakeModel(params), d, ns["_env"](d))
        except Exception as x:  # noqa: BLE001
            got = repr(x)
        if got != want:
            bad("%s %s: view plan %s..., kcproblems %s..." % (p, name, str(got)[:200], str(want)[:200]))
        for extra, why in (({"extra.weight": FakeParam(1)}, "in no view"),
                           ({want[0][3]: FakeParam(want[0][2] + 1)}, "shape")):
            try:
                ns["_view_plan"](FakeModel(dict(params, **extra)), d, ns["_env"](d))
                bad("%s %s: the view plan accepted a parameter %s" % (p, name, why))
            except (KeyError, ValueError):
                pass
    # get_inputs at the small dims: the packed input NaN but for its views, each by its init
    ns["DIMS"] = dict(ns["DIMS_SETS"]["small"])
    d = ns["_all_dims"](ns["DIMS"])
    if sum(kcproblems.numel(kcproblems.shape_of(t, d)) for t in m["inputs"]) > 10 ** 6:
        continue
    fake_torch.manual_seed(5)
    inputs = ns["get_inputs"]()
    if len(inputs) != len(m["inputs"]):
        bad("%s: get_inputs gives %d inputs" % (p, len(inputs)))
        continue
    for t, x in zip(m["inputs"], inputs):
        if list(x.shape) != kcproblems.shape_of(t, d):
            bad("%s: input %s has shape %s" % (p, t["name"], x.shape))
            continue
        if "views" not in t:
            if any(math.isnan(v) for v in x.data):
                bad("%s: input %s has NaN" % (p, t["name"]))
            continue
        layout, total = kcproblems.view_layout(t, d)
        covered = [False] * total
        for v, off, n in layout:
            vals = x.data[off:off + n]
            covered[off:off + n] = [True] * n
            init = v["init"]
            if init["dist"] == "constant":
                good = all(a == init["value"] for a in vals)
            elif init["dist"] == "uniform_fan_in":
                bound = 1 / math.sqrt(kcproblems.eval_dim_expr(init["fan_in"], d))
                good = all(-bound <= a <= bound for a in vals) and (n < 8 or len(set(vals)) > 1)
            else:
                good = all(math.isfinite(a) for a in vals)
            if not good:
                bad("%s: view %s not drawn by its init %s" % (p, v["name"], init))
        if not all(math.isnan(a) for a, c in zip(x.data, covered) if not c):
            bad("%s: the padding of %s is not NaN" % (p, t["name"]))
    # ModelNew's dims from the input shapes; a packed input of the wrong size is refused
    if ns["_input_dims"](inputs) != d:
        bad("%s: ModelNew's dims %s, small %s" % (p, ns["_input_dims"](inputs), d))
    k = [i for i, t in enumerate(m["inputs"]) if "views" in t][0]
    short = list(inputs)
    short[k] = inputs[k][0:inputs[k].numel() - 1]
    try:
        ns["_input_dims"](short)
        bad("%s: ModelNew accepted a packed input one element short" % p)
    except ValueError:
        pass
sys.exit(0 if ok else 1)
PY

if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null 2>&1; then
    NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    for p in 003_deep_narrow_mlp 008_resnet_basic_block; do
        python3 - "$T/kb/kernelbench/level3/$p"/c*.py "$T/$p.gen.cu" <<'PY'
import ast, sys
t = ast.parse(open(sys.argv[1]).read())
for n in t.body:
    if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "CUDA_SOURCE":
        open(sys.argv[2], "w").write(ast.literal_eval(n.value))
PY
        "$NVCC" -std=c++17 -arch=sm_90 -I"$KC_ROOT/tests/fixtures/torch_stub" -c "$T/$p.gen.cu" \
            -o "$T/$p.gen.o" >"$T/nvcc.log" 2>&1 ||
            fail "$p: generated CUDA source does not compile: $(tail -20 "$T/nvcc.log")"
    done
else
    echo "SKIP: no nvcc: the generated CUDA sources were not compiled"
fi
echo "ok: level-3 kernelbench modules: KernelBench's source and torch_model, views, packed inputs"

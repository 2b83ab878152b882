#!/bin/sh
# test_export_kernelbench: kexport --format kernelbench writes each kernel as a KernelBench-style
# Python module (kernelbench/<problem>/c<candidate>.py, and a record carrying its text). The
# kernels are level-1 references imported with kverify import (valid candidates): batch norm (two
# launches and an f64 scratch buffer), ReLU, a conv2d and cross-entropy. Checks: every module
# parses as Python (python3's ast); the host wrapper launches, in order, each kernel of the
# // @launch lines with their grid, block, shared memory and arguments (tensors as device
# pointers, integer expressions as int64, params by name) and allocates each // @scratch buffer
# with its dtype and count; the module's dim expressions follow C's integer semantics; the record
# holds the file's text; with nvcc present, the CUDA source compiles against a PyTorch stub
# (tests/fixtures/torch_stub). Running the modules needs a GPU and torch: tests/gpu/test_datasets.sh.
set -eu
. "$(dirname "$0")/lib.sh"

PROBLEMS="033_batch_norm 019_relu 063_conv2d_square_input_square_kernel 095_cross_entropy_loss"
for p in $PROBLEMS; do
    "$KC_BIN/kverify" problems --show-reference "level1/$p" >"$T/$p.cu" || fail "show-reference $p"
    "$KC_BIN/kverify" import --db "$T/kc.db" --problem "level1/$p" "$T/$p.cu" >/dev/null ||
        fail "import $p"
done
"$KC_BIN/kcurate" run --db "$T/kc.db" >/dev/null
"$KC_BIN/kexport" --db "$T/kc.db" --out "$T/kb" --format kernelbench --verdict any \
    --split train,valid,test,heldout >"$T/out" 2>"$T/err" || fail "kexport: $(cat "$T/err")"
grep -q '^exported 4 kernelbench records' "$T/out" || fail "expected 4 records: $(cat "$T/out")"
"$KC_BIN/kc_jsontypes" "$T/kb"/*.jsonl.gz >/dev/null || fail "kernelbench records change types"
for p in $PROBLEMS; do
    n=$(ls "$T/kb/kernelbench/level1/$p"/c*.py | wc -l)
    [ "$n" -eq 1 ] || fail "$p: expected one module, found $n"
done

if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 absent: modules not parsed"
    exit 0
fi
python3 - "$T" $PROBLEMS <<'PY' || fail "module checks failed"
import ast, glob, gzip, json, os, re, sys

T, problems = sys.argv[1], sys.argv[2:]
ok = True


def bad(msg):
    global ok
    ok = False
    print("FAIL:", msg)


def assigned(tree, name):
    for n in tree.body:
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == name:
            return ast.literal_eval(n.value)
    return None


def launch_lines(src):
    out = []
    for i, line in enumerate(src.splitlines(), 1):
        m = re.match(r"\s*//\s*@launch\s+(\w+)\s*<<<(.*)>>>\s*\((.*)\)\s*;", line)
        if m:
            out.append((i, m.group(1), m.group(2), m.group(3)))
    return out


def split_top(text):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += 1 if ch == "(" else -1 if ch == ")" else 0
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def dims3(expr):
    expr = expr.strip()
    if expr.startswith("dim3(") and expr.endswith(")"):
        parts = split_top(expr[5:-1])
    else:
        parts = [expr]
    return (parts + ["1", "1"])[:3]


records = {}
for f in glob.glob(os.path.join(T, "kb", "*.jsonl.gz")):
    for line in gzip.open(f, "rt"):
        r = json.loads(line)
        records[r["path"]] = r

for p in problems:
    path = glob.glob(os.path.join(T, "kb", "kernelbench", "level1", p, "c*.py"))[0]
    text = open(path).read()
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        bad("%s does not parse: %s" % (path, e))
        continue
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    for want in ("Model", "ModelNew", "get_inputs", "get_init_inputs"):
        if want not in names:
            bad("%s: no %s" % (p, want))
    rel = os.path.relpath(path, os.path.join(T, "kb"))
    schema = json.load(open(os.path.join(os.environ["KC_ROOT"], "schemas", "record.schema.json")))
    kb = schema["$defs"]["kernelbench"]
    if rel in records and set(records[rel]) != set(kb["required"]):
        bad("%s: record keys %s, schema %s" % (p, sorted(records[rel]), sorted(kb["required"])))
    if rel not in records or records[rel]["code"] != text:
        bad("%s: the record does not carry the module's text" % p)
    manifest = json.load(open(os.path.join(os.environ["KC_PROBLEMS"], "level1", p + ".json")))
    cuda = assigned(tree, "CUDA_SOURCE")
    src = open(os.path.join(T, p + ".cu")).read()
    if src not in cuda:
        bad("%s: the device code is not in CUDA_SOURCE verbatim" % p)
    tensors = [t["name"] for t in manifest["inputs"] + manifest["outputs"]]
    scratch = re.findall(r"//\s*@scratch\s+(\w+)\s+(\w+)\[(.*)\]", src)
    tensors += [s[0] for s in scratch]
    params = [q["name"] for q in manifest.get("params", [])]
    wrapper = cuda[cuda.index("// ---- host wrapper"):]
    pos = 0
    for line, kernel, geometry, args in launch_lines(src):
        g = split_top(geometry)
        grid, block, smem = dims3(g[0]), dims3(g[1]), (g[2] if len(g) > 2 else "0")
        want = ["{ // @launch line %d" % line,
                "dim3 grid(%s);" % ", ".join("(unsigned)(%s)" % e for e in grid),
                "dim3 block(%s);" % ", ".join("(unsigned)(%s)" % e for e in block),
                "size_t smem = (size_t)(%s);" % smem]
        call = []
        for a in split_top(args):
            if a in tensors:
                call.append("kc_host::ptr{t_%s.data_ptr()}" % a)
            elif a in params or re.match(r"^[0-9.]+[fF]?$", a) and "." in a:
                call.append(a)
            else:
                call.append("(int64_t)(%s)" % a)
        want.append("%s<<<grid, block, smem, stream>>>(%s);" % (kernel, ", ".join(call)))
        for w in want:
            at = wrapper.find(w, pos)
            if at < 0:
                bad("%s: launch line %d: the wrapper lacks (in order) %r" % (p, line, w))
                break
            pos = at + len(w)
    dtypes = {"f32": "kFloat", "f64": "kDouble", "f16": "kHalf", "bf16": "kBFloat16",
              "i32": "kInt", "i64": "kLong", "u8": "kByte", "bool": "kBool"}
    for name, dtype, count in scratch:
        w = "torch::Tensor t_%s = torch::empty(std::vector<int64_t>{(int64_t)(%s)}, opts.dtype(torch::%s));" % (
            name, count, dtypes[dtype])
        if w not in wrapper:
            bad("%s: scratch %s not allocated as %r" % (p, name, w))
    if p == "033_batch_norm" and (len(launch_lines(src)) != 2 or not scratch):
        bad("033 should have two launches and a scratch buffer (the multi-launch case)")
    # the module's dim expressions: C semantics (truncation toward zero), cdiv, min, max
    ns = {"re": re}
    exec(compile(ast.Module(body=[n for n in tree.body if isinstance(n, ast.FunctionDef)
                                  and n.name == "_expr"], type_ignores=[]), path, "exec"), ns)
    e = ns["_expr"]
    d = {"A": 7, "B": -7, "C": 2, "Z": 0}
    for expr, want in [("cdiv(A, C)", 4), ("B / C", -3), ("B % C", -1), ("A % C", 1),
                       ("min(A, C) * max(B, C) + (A - C) * 2", 14), ("cdiv(A*C+1, 3)", 5), ("-A + 1", -6),
                       ("A * Z + 1", 1), ("(A + 2*Z - 1)/C + 1", 4), ("Z * B / C", 0)]:
        try:
            got = e(expr, d)
        except Exception as x:  # noqa: BLE001
            got = repr(x)
        if got != want:
            bad("_expr(%r) = %r, want %r" % (expr, got, want))
    # every dims set of the module: derived dims as tools/problems/kcproblems.py derives them (an
    # independent transcription of the manifest's expressions) and input shapes evaluate
    sys.path.insert(0, os.path.join(os.environ["KC_ROOT"], "tools", "problems"))
    import kcproblems
    exec(compile(ast.Module(body=[n for n in tree.body if isinstance(n, ast.FunctionDef)
                                  and n.name == "_all_dims"], type_ignores=[]), path, "exec"), ns)
    ns["DERIVED"] = assigned(tree, "DERIVED")
    for name, want_dims in kcproblems.dims_sets(manifest):
        try:
            got_dims = ns["_all_dims"](assigned(tree, "DIMS_SETS")[name])
            shapes = [[e(x, got_dims) for x in t[2]] for t in assigned(tree, "INPUTS")]
        except Exception as x:  # noqa: BLE001
            bad("%s dims %s: the module's dim expressions fail: %r" % (p, name, x))
            continue
        if got_dims != want_dims:
            bad("%s dims %s: module %s, manifest %s" % (p, name, got_dims, want_dims))
        if shapes != [kcproblems.shape_of(t, want_dims) for t in manifest["inputs"]]:
            bad("%s dims %s: input shapes %s" % (p, name, shapes))
sys.exit(0 if ok else 1)
PY

if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null 2>&1; then
    NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    python3 - "$T/kb/kernelbench/level1/033_batch_norm"/c*.py "$T/gen.cu" <<'PY'
import ast, sys
t = ast.parse(open(sys.argv[1]).read())
for n in t.body:
    if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "CUDA_SOURCE":
        open(sys.argv[2], "w").write(ast.literal_eval(n.value))
PY
    "$NVCC" -std=c++17 -arch=sm_90 -I"$KC_ROOT/tests/fixtures/torch_stub" -c "$T/gen.cu" \
        -o "$T/gen.o" >"$T/nvcc.log" 2>&1 || fail "generated CUDA source does not compile: $(tail -20 "$T/nvcc.log")"
else
    echo "SKIP: no nvcc: the generated CUDA source was not compiled"
fi
echo "ok: kernelbench modules parse, launch what the launch lines say, compile"

#!/usr/bin/env python3
"""make_corpus.py: regenerates the seed corpora of the libFuzzer targets
(tests/fuzz/corpus/<target>/) from the problems (problems/level1/*.json, *.cu,
problems/shared/*.cuh; level-3 networks, see LEVEL3), the GPU catalogue kernels
and the string fixtures of the unit tests. Deterministic; run from the
repository root after the problems or fixtures change:
    python3 tests/fuzz/make_corpus.py              # every target's seeds, rewritten
    python3 tests/fuzz/make_corpus.py --add level3 # only that group's seeds, added (or layers)
--add GROUP writes the seeds of one group (level3) beside the committed ones and removes
nothing, so that new seeds need not regenerate the others.
Keeps the committed corpus small (every target's seeds together < 2 MB)."""
import glob, hashlib, json, os, re, shutil, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")
seeds = {}
groups = {}  # group -> {target: {name: data}}
MAX_LEN = {"expr": 1024, "launch": 8192}  # tests/fuzz/run.sh max_len (else 32768)


def add(target, data, group=None):
    if isinstance(data, str):
        data = data.encode()
    name = hashlib.sha1(data).hexdigest()
    seeds.setdefault(target, {})[name] = data
    if group:
        groups.setdefault(group, {}).setdefault(target, {})[name] = data


def c_literals(path):
    """The string literals of a C file, adjacent ones joined, escapes decoded."""
    text = open(path, encoding="utf-8").read()
    lit = r'"((?:[^"\\\n]|\\.)*)"'
    for m in re.finditer(lit + r'(?:\s*' + lit + r')*', text):
        parts = re.findall(lit, m.group(0))
        raw = "".join(parts).encode("utf-8")
        try:
            yield raw.decode("unicode_escape").encode("latin-1")
        except (UnicodeDecodeError, UnicodeEncodeError):
            continue


def rel(*p):
    return os.path.join(ROOT, *p)


manifests = sorted(glob.glob(rel("problems", "level1", "*.json")))
problems = []
for m in manifests:
    j = json.load(open(m))
    ref = os.path.join(os.path.dirname(m), j["reference"])
    problems.append((j, open(m, "rb").read(), open(ref, "rb").read()))

# expr: every expression of the manifests and of the references' launch lines, and edge cases.
exprs = set()
for j, _, src in problems:
    for t in j.get("inputs", []) + j.get("outputs", []):
        exprs.update(str(s) for s in t.get("shape", []))
    exprs.update([j["bytes"], j["flops"]])
    for line in src.decode().splitlines():
        if "@launch" in line and "<<<" in line and ">>>" in line:
            inner = line.split("<<<", 1)[1].split(">>>", 1)[0]
            exprs.update(x.strip() for x in re.split(r",(?![^(]*\))", inner))
exprs.update(["cdiv(N, 256)", "min(max(N, 1), 65536)", "-(N)", "N % 7 - B / 2", "0x7fffffffffffffff",
              "M + 1", "K - 1", "K / O", "K % O", "cdiv(K, O)", "((((N))))", "9223372036854775807L",
              "N * N * N * N * N * N * N", "1u + 2ul"])
for e in sorted(exprs):
    add("expr", e)

# launch: "<id>\n" then the reference's launch/scratch lines; extract and policy: whole kernels.
for j, _, src in problems:
    lines = [l for l in src.decode().splitlines() if "@launch" in l or "@scratch" in l]
    add("launch", j["id"] + "\n" + "\n".join(lines) + "\n")
# launch: whole networks (issue 38): // @for loops (nested, FIRST > 0, no trips, at the launch
# cap) and NAME[INDEX] offsets (at 0 and numel, into scratch), and their errors.
NETWORK_SEEDS = [
    "level1/023_softmax\n// @scratch act f32[2*B*D]\n// @for l in 0..3\n"
    "// @launch layer<<<dim3(cdiv(D, 256), B), 256, 4*l>>>(x[0], act[(l % 2)*B*D], w[l], D, l);\n"
    "//   @for t in 1..B\n//     @for h in 0..2\n"
    "// @launch step<<<cdiv(D, 256), 256>>>(act[t*D], y[(t - 1)*D], t, h, l);\n"
    "//     @end\n//   @end\n// @end\n// @launch last<<<1, 1>>>(act[B*D], y[B*D]);\n",
    "level1/019_relu\n// @scratch ping f32[2*B*D]\n// @for l in 0..8\n"
    "// @launch relu<<<cdiv(B*D, 256), 256>>>(ping[(l % 2)*B*D], ping[((l + 1) % 2)*B*D], B*D);\n"
    "// @end\n// @launch relu<<<cdiv(B*D, 256), 256>>>(ping[0], y, B*D);\n",
    "level1/023_softmax\n// @for t in 0..B\n// @launch cell<<<1, 256>>>(x[t*D], y[t*D], t, D - t);\n"
    "// @end\n",
    "level1/023_softmax\n// @for a in 0..2\n// @for b in 0..2\n// @for c in 0..2\n// @for d in 0..2\n"
    "// @launch k<<<a + 1, b + 1, c*d>>>(x[a*b], y[c*d], a + b + c + d);\n// @end\n// @end\n// @end\n"
    "// @end\n",
    "level1/023_softmax\n// @for i in 0..256\n// @for j in 0..256\n// @launch k<<<1, 1>>>(x, y, i*j);\n"
    "// @end\n// @end\n",
    "level1/023_softmax\n// @for i in B..0\n// @launch k<<<0 - 1, 1>>>(x, y);\n// @end\n"
    "// @for j in 0 - 3..min(B - 3, 2)\n// @launch k<<<1, 1>>>(x[j + 3], y[B*D]);\n// @end\n",
    "level1/023_softmax\n// @for l in 0..2\n// @launch k<<<1, 1>>>(x, y);\n",
    "level1/023_softmax\n// @launch k<<<1, 1>>>(x, y);\n// @end\n// @for l in 0:2\n",
    "level1/023_softmax\n// @for l in 0..2\n// @scratch s f32[l]\n// @launch k<<<1, 1>>>(x, s[l]);\n"
    "// @end\n",
    "level1/020_leaky_relu\n// @for i in 0..B\n// @launch k<<<1, 1>>>(x[i*D], y[i*D + D], negative_slope, i);"
    "\n// @end\n",
]
for seed in NETWORK_SEEDS:
    add("launch", seed)
# launch: @layer lines (issue 38, group "layers"): names with {expr} parts, regions at the
# buffer's edges, errors, the 4096-point cap
LAYER_SEEDS = [
    "level1/023_softmax\n// @scratch t f32[B*D]\n// @launch a<<<1, 1>>>(x, t);\n"
    "// @layer features.0 t[0] f32[B*D]\n// @for l in 0..2\n// @launch b<<<1, 1>>>(t, y);\n"
    "// @layer layer1.{l}.conv{l + 1} y[l*D] f32[D]\n// @end\n// @layer fc y[B*D - 1] f32[1]\n",
    "level1/023_softmax\n// @launch a<<<1, 1>>>(x, y);\n// @layer a.{B} y[1] f32[B*D]\n"
    "// @layer x x[0] f32[1]\n// @layer b y f16[1]\n// @layer c.{} y[0] f32[0]\n",
    "level1/023_softmax\n// @launch a<<<1, 1>>>(x, y);\n// @for i in 0..4097\n"
    "// @launch a<<<1, 1>>>(x, y);\n// @layer l.{i} y[i] f32[1]\n// @end\n",
]
for seed in LAYER_SEEDS:
    add("launch", seed, "layers")
for i, (j, _, src) in enumerate(problems):
    if i % 4 == 0:
        s = src.decode()
        add("extract", "Here is the kernel:\n```cuda\n" + s + "```\nIt uses one thread per element.")
        add("extract", "<think>first try\n```cuda\nold\n```</think>\n```cu\n" + s + "```\n```python\nx\n```\n")
    if i % 3 == 0:
        add("policy", src)
for path in sorted(glob.glob(rel("problems", "shared", "*.cuh")) + glob.glob(rel("tests", "gpu", "catalogue", "*.cu"))):
    add("policy", open(path, "rb").read())

# problem: manifest, NUL, reference source (the harness writes both where the loader looks).
for i, (j, mtext, src) in enumerate(problems):
    if i % 4 == 0 or b'#include "shared/' in src[:2000] and i % 8 == 1:
        add("problem", mtext + b"\0" + src)

# problem: relu with the attention suite's kinds of "hidden" generators (ranges, values,
# divisor_of, expr, requires, caps) and a constant init with "vary", so that draws get fuzzed.
relu_path = rel("problems", "level1", "019_relu.json")
relu_src = open(rel("problems", "level1", "019_relu.cu"), "rb").read()
for hidden, init in [
    ({"dims": {"B": {"min": 1, "max": 7}, "D": {"min": 1, "max": 20000}}, "why": "w"}, None),
    ({"dims": {"B": {"values": [12, 30, 64]}, "D": {"divisor_of": "B"}},
      "require": ["B % D == 0", "D >= 2"], "max_bytes": 4096, "max_flops": 1e6, "why": "w"},
     {"dist": "constant", "value": 1, "vary": {"dist": "uniform", "lo": 0.5, "hi": 1.5}}),
    ({"dims": {"B": {"min": 1, "max": 50}, "D": {"expr": "2*B+1"}}, "require": ["D > B"],
      "why": "w"}, {"dist": "constant", "value": 2, "vary": {"dist": "normal", "std": 3}}),
]:
    m = json.load(open(relu_path))
    m["hidden"] = hidden
    if init:
        m["inputs"][0]["init"] = init
    add("problem", json.dumps(m, indent=2).encode() + b"\0" + relu_src)

# Fixture strings of the unit tests, routed by shape.
for path in sorted(glob.glob(rel("tests", "unit", "test_*.c"))):
    for lit in c_literals(path):
        if len(lit) < 4:
            continue
        if b"```" in lit or b"<think>" in lit:
            add("extract", lit)
        if b"@launch" in lit or b"@scratch" in lit:
            add("launch", b"level1/023_softmax\n" + lit)
        if b"#include" in lit or b"??=" in lit or b"%:" in lit:
            add("policy", lit)
        if b"data:" in lit or b"event:" in lit:
            add("sse", b"\x07" + lit)
            add("wire", b"\x02\x05" + lit)
            add("wire", b"\x03\x05" + lit)
        if lit.startswith(b"{"):
            add("wire", b"\x00\x00" + lit)
            add("wire", b"\x01\x00" + lit)
            add("wire", b"\x04\x08" + lit)

# Level 3 (issue 38: whole networks, a packed input of views, @for loops over stacked views,
# torch_model): the launch units of the references short enough for fuzz_launch's max_len (it
# parses them against the level-3 problems), manifests of a few networks for fuzz_problem (the
# reference reduced to its launch lines: the fuzz tree has no l3 shared kernels), and their
# expressions (view shapes, derived dims, bytes and flops, launch geometry and arguments).
LEVEL3_PROBLEMS = ["003_deep_narrow_mlp", "008_resnet_basic_block", "010_resnet101",
                   "028_vision_transformer", "035_lstm", "038_lstm_bidirectional",
                   "044_mini_gpt_block", "048_mamba2_return_y"]
UNIT_LINE = re.compile(r"^\s*//\s*@(launch|scratch|for|end|layer)\b")


def unit_lines(src):
    return [l for l in src.splitlines() if UNIT_LINE.match(l)]


forms3 = set()
for path in sorted(glob.glob(rel("problems", "level3", "*.json"))):
    j = json.load(open(path))
    src = open(os.path.join(os.path.dirname(path), j["reference"])).read()
    unit = j["id"] + "\n" + "\n".join(unit_lines(src)) + "\n"
    if len(unit) <= MAX_LEN["launch"]:
        add("launch", unit, "level3")
    if os.path.basename(path)[:-5] not in LEVEL3_PROBLEMS:
        continue
    kept = "// launch lines of %s\n" % j["reference"] + "\n".join(unit_lines(src)) + "\n"
    add("problem", open(path, "rb").read() + b"\0" + kept.encode(), "level3")
    exprs3 = set(j.get("derived", {}).values()) | {j["bytes"], j["flops"]}
    for t in j["inputs"] + j["outputs"]:
        for v in t.get("views", [t]):
            exprs3.update(str(e) for e in v.get("shape", []))
    for line in unit_lines(src):
        m = re.search(r"<<<(.*)>>>\s*\((.*)\)", line)
        if m:
            exprs3.update(x.strip() for x in re.split(r",(?![^(]*\))", m.group(1)))
            for a in re.split(r",(?![^(\[]*[)\]])", m.group(2)):
                a = a.strip()
                exprs3.add(a[a.index("[") + 1:-1] if a.endswith("]") and "[" in a else a)
        m = re.search(r"@for\s+\w+\s+in\s+(.*)\.\.(.*)$", line)
        if m:
            exprs3.update([m.group(1).strip(), m.group(2).strip()])
    for e in sorted(exprs3):
        # one expression per form (names and numbers aside); a bare name or number adds nothing
        form = re.sub(r"\b(?!cdiv\b|min\b|max\b)[A-Za-z_]\w*|\d+", "n", e)
        if re.search(r"[-+*/%(]", e) and len(e) <= MAX_LEN["expr"] and form not in forms3:
            forms3.add(form)
            add("expr", e, "level3")

# ipc: messages as the compile servers and GPU workers frame them (the JSON's length line, the
# JSON, then payloads), and in the older unframed form (a JSON line) that ipc_recv still reads.
def msg(obj, *blobs, framed=True):
    obj = dict(obj)
    obj["blobs"] = [len(b) for b in blobs]
    text = json.dumps(obj, separators=(",", ":")).encode()
    head = b"%d\n" % len(text) if framed else b""
    return head + text + (b"" if framed else b"\n") + b"".join(blobs)

add("ipc", msg({"progress": "checks", "deadline_ms": 3000.0}, framed=False) +
    msg({"result": {"verdict": "mismatch"}}, b"x"), "ipc")
add("ipc", b"12345678\n{}", "ipc")
add("ipc", b"7\n{\"a\":1}3\n[1]", "ipc")

add("ipc", msg({"ok": True, "compile_ms": 12.5}, b"ptxas info", b"\x7fELF\x02\x01\x01\0cubin"), "ipc")
add("ipc", msg({"progress": "checks", "deadline_ms": 3000.0}), "ipc")
add("ipc", msg({"result": {"verdict": "correct", "evidence": {"runs": []}}}) +
    msg({"printf": {"bytes": 5, "text": "hello", "truncated": False}}), "ipc")
add("ipc", msg({"job": "compile", "id": 3}, b"__global__ void k(){}\n// @launch k<<<1,1>>>();\n"), "ipc")
add("ipc", b'{"blobs":[4]}\nab', "ipc")
add("ipc", b'{"no_blobs":1}\n{"blobs":[]}\n', "ipc")

# serve: bodies of kverify serve's POST /v1/verify (one item, a batch, reward parameters, ids
# of every JSON type, and refusals: a bad id, a long completion, too many items, a typo).
BLOCK = "```cuda\n__global__ void k(float *y) { y[0] = 1; }\n// @launch k<<<1, 1>>>(y);\n```"
for body in [
    {"problem_id": "level1/019_relu", "completion": BLOCK},
    {"problem_id": "level1/019_relu", "completion": "no code", "id": 7},
    {"items": [{"problem_id": "level2/001_conv2d_relu_bias_add", "completion": "x", "id": "a"},
               {"problem_id": "level3/001_mlp", "completion": "y", "id": {"k": [1, None]}}],
     "reward": {"correct": 1.0, "speedup_weight": 0.5, "speedup_cap": 4}},
    {"items": [], "reward": {"suspicious_speedup": 100}},
    {"items": [{"problem_id": "a/b", "completion": ""}] * 4},
    {"problem_id": "../etc/passwd", "completion": "x"},
    {"problem_id": "level1/019_relu", "completion": "z" * 65},
    {"problem_id": "level1/019_relu", "completion": "x", "reward": {"corect": 1}},
]:
    add("serve", json.dumps(body), "serve")
add("serve", b'{"problem_id": "level1/019_relu", "problem_id": "x", "completion": ""}', "serve")

if len(sys.argv) == 3 and sys.argv[1] == "--add":
    chosen = groups.get(sys.argv[2])
    if chosen is None:
        sys.exit("make_corpus.py: no group %r (groups: %s)" % (sys.argv[2], ", ".join(sorted(groups))))
    for t, named in sorted(chosen.items()):
        d = os.path.join(OUT, t)
        os.makedirs(d, exist_ok=True)
        new = [n for n in sorted(named) if not os.path.exists(os.path.join(d, n))]
        for name in new:
            open(os.path.join(d, name), "wb").write(named[name])
        print("%s: %d seeds of %s, %d new" % (t, len(named), sys.argv[2], len(new)))
    sys.exit(0)
if len(sys.argv) > 1:
    sys.exit(__doc__)
for t in seeds:
    d = os.path.join(OUT, t)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, data in sorted(seeds[t].items()):
        open(os.path.join(d, name), "wb").write(data)
total = sum(len(v) for s in seeds.values() for v in s.values())
print("corpus: " + ", ".join("%s %d" % (t, len(seeds[t])) for t in sorted(seeds)) + " seeds; %d bytes" % total)

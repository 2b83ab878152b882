#!/bin/sh
# test_export_reasoning: the reasoning the models wrote reaches the datasets (issue 36). The fake
# LLM server answers a bug-then-fix script with reasoning in each form a server sends it: OpenAI's
# reasoning_content field (and the "reasoning" field of OpenRouter and newer vLLM), Anthropic
# thinking blocks, inline <think>...</think> in the content (and only the closing tag), streamed
# and not; kcollect --compile-only records each run. In every --reasoning mode (field, think,
# drop) the sft and multiturn exports, read with python3's json module, hold the answers and
# their reasoning byte for byte as the server sent them (unicode, quotes, backslashes, tabs, a
# U+2028, a draft code block inside the reasoning that never becomes the candidate), keyed and
# typed the same in every message and record; the same database and config export the same
# bytes. Then: reasoning cut by the token limit stays cut and marked truncated, an answer without
# reasoning has null; two identical kernels reached by different reasoning are one kernel whose
# record names the reasoning it kept; the manifest says the context policy; the datasheet, the
# card and kcurate stats (text and --json) give the share of answers with reasoning and its
# median length per model; plan records (kcollect --strategy mtmc) carry the planner's answer and
# its reasoning.
set -eu
. "$(dirname "$0")/lib.sh"

PROBLEM=level1/019_relu
# The script: turn 0 a kernel that does not compile, turn 1 the reference; both with reasoning.
python3 - "$KC_PROBLEMS/$PROBLEM.cu" "$T" <<'PY'
import json, sys
kernel = open(sys.argv[1], encoding="utf-8").read()
draft = ('A first draft:\n```cuda\nextern "C" __global__ void draft(float *y) { y[0] = undeclared_draft; }\n'
         '// @launch draft<<<1, 1>>>(y);\n```\nIt ignores the size, so the answer is another kernel.')
r0 = ('Okay \u2014 ReLU is max(x, 0) over B\u00d7D floats.\n\tTabs, "quotes", a back\\slash, '
      '\u00e9 \u2211 \U0001F600, a line\u2028separator.\n' + draft)
r1 = 'The compile error names kc_broken; remove it.\nSecond thoughts: \u00e9\u00e8 "again".'
c0 = 'First try.\n\n```cuda\n' + kernel + '__device__ int kc_broken() { return undeclared_identifier_kc; }\n```'
c1 = 'Here is the kernel.\n\n```cuda\n' + kernel + '```'
json.dump({"answers": [{"content": c0, "reasoning": r0}, {"content": c1, "reasoning": r1}]},
          open(sys.argv[2] + "/script.json", "w"))
json.dump({"kernel": kernel, "r": [r0, r1], "c": [c0, c1]}, open(sys.argv[2] + "/sent.json", "w"))
PY

# check.py EXPORT_DIR MODE FORMAT: the records hold what sent.json says was sent
cat >"$T/check.py" <<'PY'
import glob, gzip, hashlib, json, sys
d, mode, fmt = sys.argv[1], sys.argv[2], sys.argv[3]
sent = json.load(open(sys.argv[4] if len(sys.argv) > 4 else d + "/../sent.json"))
recs = [json.loads(l) for f in sorted(glob.glob(d + "/*.jsonl*"))
        for l in (gzip.open(f, "rt", encoding="utf-8") if f.endswith(".gz") else open(f, encoding="utf-8"))]
assert recs, "no records"
keys = {"role", "content", "reasoning_content"} if mode == "field" else {"role", "content"}
def think(r, c): return "<think>\n" + r + "\n</think>\n\n" + c
def content(r, c): return think(r, c) if mode == "think" else c
block = "```cuda\n" + sent["kernel"] + "```"
for rec in recs:
    msgs = rec["messages"]
    for m in msgs:
        assert set(m) == keys, "%s message keys %s, want %s" % (m["role"], sorted(m), sorted(keys))
        if mode == "field" and m["role"] != "assistant":
            assert m["reasoning_content"] is None, "a %s message with reasoning" % m["role"]
    answers = [m for m in msgs if m["role"] == "assistant"]
    if fmt == "sft":
        want = [(sent["r"][1], block)]
        assert rec["labels"]["reasoning_state"] == "complete", rec["labels"]
        assert rec["provenance"]["reasoning_sha256"] == hashlib.sha256(sent["r"][1].encode()).hexdigest()
    else:
        want = list(zip(sent["r"], sent["c"]))
        states = [json.loads(t["labels_json"])["reasoning_state"] for t in rec["turns"]]
        assert states == ["complete"] * 2, states
    assert len(answers) == len(want), (len(answers), len(want))
    for m, (r, c) in zip(answers, want):
        assert m["content"] == content(r, c), "content differs:\n%r\n%r" % (m["content"], content(r, c))
        if mode == "field":
            assert m["reasoning_content"] == r, "reasoning differs:\n%r\n%r" % (m["reasoning_content"], r)
    if mode == "drop":
        text = json.dumps(rec, ensure_ascii=False)
        assert all(r not in text for r in sent["r"]), "--reasoning drop left reasoning in"
m = json.load(open(d + "/manifest.json"))
assert m["config"]["reasoning"] == mode and m["reasoning"]["mode"] == mode, m["config"]
assert m["reasoning"]["records"] == len(recs) and m["reasoning"]["share"] == 1.0, m["reasoning"]
lens = sorted(len(r) for r in (sent["r"][1:] if fmt == "sft" else sent["r"]))
assert m["reasoning"]["median_chars"] == (lens[(len(lens) - 1) // 2] + lens[len(lens) // 2]) / 2, m["reasoning"]
PY

# collect FORM STREAM: a run against a fake server sending reasoning in form FORM
collect() {
    form=$1 stream=$2
    DB="$T/$form-$stream.db"
    api=openai
    case $form in
    field) start_server --script "$T/script.json" ;;
    field-reasoning) start_server --script "$T/script.json" --reasoning-field reasoning ;;
    anthropic) start_server --script "$T/script.json"; api=anthropic ;;
    tags) start_server --script "$T/script.json" --think tags ;;
    tags-no-open) start_server --script "$T/script.json" --think tags-no-open ;;
    esac
    flag=; [ "$stream" = stream ] || flag=--no-stream
    "$KC_BIN/kcollect" --problems $PROBLEM --endpoint "$URL" --api $api --model fake-r1 --db "$DB" \
        --turns 3 --compile-only $flag >"$T/collect.out" 2>&1 || { cat "$T/collect.out"; fail "$form $stream: kcollect"; }
    stop_server
    # the server sent the reasoning in this form (the raw answer as recorded)
    case $form in
    field) marker='"reasoning_content":' ;; field-reasoning) marker='"reasoning":' ;;
    anthropic) marker='"thinking' ;; tags) marker='<think>' ;; tags-no-open) marker='</think>' ;;
    esac
    sqlite3 "$DB" "SELECT CAST(b.data AS TEXT) FROM responses r JOIN blobs b ON b.sha256 = r.raw_sha" >"$T/raw"
    grep -q "$marker" "$T/raw" || fail "$form $stream: the server did not send $marker"
    [ "$stream" = stream ] && ! grep -q '^data: ' "$T/raw" && fail "$form $stream: not streamed"
    [ "$form" = tags-no-open ] && grep -q '<think>' "$T/raw" && fail "tags-no-open sent an opening tag"
    # the draft inside the reasoning never became the candidate
    [ "$(sqlite3 "$DB" "SELECT group_concat(t.turn_index || ':' || v.verdict, ' ') FROM turns t
          JOIN v_latest_verification v ON v.candidate_id = t.candidate_id ORDER BY t.turn_index")" = \
        "0:compile_error 1:compiled" ] || fail "$form $stream: verdicts $(sqlite3 "$DB" 'SELECT verdict FROM verifications')"
    sqlite3 "$DB" "SELECT CAST(data AS TEXT) FROM blobs b JOIN candidates c ON c.source_sha = b.sha256" |
        grep -q draft && fail "$form $stream: the draft in the reasoning was taken for the answer"
    "$KC_BIN/kcurate" run --db "$DB" >/dev/null
}

# export DB NAME FORMAT MODE [kexport options...]
export_one() {
    db=$1 name=$2 format=$3 mode=$4; shift 4
    "$KC_BIN/kexport" --db "$db" --out "$T/$name" --format "$format" --reasoning "$mode" "$@" \
        >"$T/export.out" 2>&1 || { cat "$T/export.out"; fail "kexport $name"; }
}

for form in field field-reasoning anthropic tags tags-no-open; do
    for stream in stream no-stream; do
        collect $form $stream
        for mode in field think drop; do
            out="$form-$stream-$mode"
            export_one "$DB" "$out-sft" sft "$mode" --verdict compiled
            export_one "$DB" "$out-mt" multiturn "$mode" --verdict any
            python3 "$T/check.py" "$T/$out-sft" "$mode" sft "$T/sent.json" || fail "$out sft"
            python3 "$T/check.py" "$T/$out-mt" "$mode" multiturn "$T/sent.json" || fail "$out multiturn"
        done
    done
done

# the same database and config: the same bytes
export_one "$T/field-stream.db" again-sft sft field --verdict compiled
for f in manifest.json README.md DATASHEET.md train-00000-of-00001.jsonl.gz; do
    cmp -s "$T/field-stream-field-sft/$f" "$T/again-sft/$f" || fail "a second export differs in $f"
done

# the datasheet, the card and the manifest
D="$T/field-stream-field-mt"
grep -q '^- Reasoning: 1 of 1 records (100.0%) carry the model.s reasoning, in `reasoning_content`' "$D/DATASHEET.md" ||
    fail "datasheet: $(grep Reasoning "$D/DATASHEET.md")"
grep -q 'median length [0-9.]* characters over the 2 reasoning texts' "$D/DATASHEET.md" || fail "datasheet median"
grep -q '^- Reasoning: 1 of 1 records' "$D/README.md" || fail "the card lacks the reasoning line"
grep -q 'reasoning_content.*DeepSeek-R1 and Qwen3' "$D/README.md" || fail "the card does not say where reasoning is"
grep -q 'Context policy of the requests: `drop-reasoning`' "$D/DATASHEET.md" || fail "datasheet context policy"
python3 - "$D/manifest.json" <<'PY' || fail "manifest context"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["reasoning"]["context"] == ["drop-reasoning"], m["reasoning"]
assert [r["context"] for r in m["provenance"]["runs"]] == ["drop-reasoning"], m["provenance"]["runs"]
PY
grep -q 'as `<think>' "$T/tags-stream-think-sft/DATASHEET.md" || fail "datasheet: think mode"
grep -q 'not exported here (--reasoning drop)' "$T/tags-stream-drop-sft/DATASHEET.md" || fail "datasheet: drop mode"

# kcurate stats: per model, the share of answers with reasoning and its median length
"$KC_BIN/kcurate" stats --db "$T/anthropic-stream.db" >"$T/stats.txt"
grep -q '^  fake-r1 *2 of 2 with reasoning (100.0%), median [0-9.]* chars, 0 cut short' "$T/stats.txt" ||
    fail "stats: $(grep -A2 reasoning "$T/stats.txt")"
"$KC_BIN/kcurate" stats --db "$T/anthropic-stream.db" --json >"$T/stats.json"
python3 - "$T/stats.json" "$T/sent.json" <<'PY' || fail "stats --json"
import json, sys
r = json.load(open(sys.argv[1]))["reasoning"]["fake-r1"]
s = json.load(open(sys.argv[2]))
assert (r["answers"], r["with_reasoning"], r["share"], r["truncated"]) == (2, 2, 1.0, 0), r
assert r["median_chars"] == sum(len(x) for x in s["r"]) / 2, r
PY

# the context policy full is said in the manifest
start_server --script "$T/script.json"
"$KC_BIN/kcollect" --problems $PROBLEM --endpoint "$URL" --model fake-r1 --db "$T/full.db" --turns 3 \
    --compile-only --context full >/dev/null 2>&1 || fail "kcollect --context full"
stop_server
"$KC_BIN/kcurate" run --db "$T/full.db" >/dev/null
export_one "$T/full.db" full-mt multiturn field --verdict any
python3 "$T/check.py" "$T/full-mt" field multiturn "$T/sent.json" || fail "full: records"
grep -q 'Context policy of the requests: `full` (earlier answers were sent back with their reasoning)' \
    "$T/full-mt/DATASHEET.md" || fail "datasheet: context full"

# Cut and absent reasoning: turn 0's reasoning is cut by the token limit inside an open <think>
# (no answer), turn 1 answers without reasoning.
python3 - "$T" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/sent.json"))
json.dump({"answers": [{"content": "<think>\nLet me think about the grid", "finish_reason": "length"},
                       {"content": s["c"][1]}]}, open(sys.argv[1] + "/cut.json", "w"))
PY
start_server --script "$T/cut.json"
"$KC_BIN/kcollect" --problems $PROBLEM --endpoint "$URL" --model fake-r1 --db "$T/cut.db" --turns 3 \
    --compile-only --no-stream >/dev/null 2>&1 || fail "kcollect (cut)"
stop_server
"$KC_BIN/kcurate" run --db "$T/cut.db" >/dev/null
for mode in field think; do
    export_one "$T/cut.db" "cut-mt-$mode" multiturn $mode --verdict any
    export_one "$T/cut.db" "cut-sft-$mode" sft $mode --verdict compiled
done
python3 - "$T" "$T/sent.json" <<'PY' || fail "cut and absent reasoning"
import glob, gzip, json, sys
t, s = sys.argv[1], json.load(open(sys.argv[2]))
def one(d):
    (f,) = glob.glob(t + "/" + d + "/*.jsonl.gz")
    (line,) = gzip.open(f, "rt", encoding="utf-8").read().splitlines()
    return json.loads(line)
mt = one("cut-mt-field")
a = [m for m in mt["messages"] if m["role"] == "assistant"]
assert (a[0]["content"], a[0]["reasoning_content"]) == ("", "Let me think about the grid"), a[0]
assert (a[1]["content"], a[1]["reasoning_content"]) == (s["c"][1], None), a[1]
assert [json.loads(x["labels_json"])["reasoning_state"] for x in mt["turns"]] == ["truncated", "none"]
a = [m for m in one("cut-mt-think")["messages"] if m["role"] == "assistant"]
assert a[0]["content"] == "<think>\nLet me think about the grid", a[0]  # cut: left open
assert a[1]["content"] == s["c"][1], a[1]                                # none: nothing invented
sft = one("cut-sft-field")
assert sft["messages"][-1]["reasoning_content"] is None and sft["labels"]["reasoning_state"] == "none"
assert sft["provenance"]["reasoning_sha256"] is None
assert "<think>" not in one("cut-sft-think")["messages"][-1]["content"]
m = json.load(open(t + "/cut-mt-field/manifest.json"))["reasoning"]
assert (m["records"], m["texts"], m["truncated"]) == (1, 1, 1), m
m = json.load(open(t + "/cut-sft-field/manifest.json"))["reasoning"]
assert (m["records"], m["texts"], m["median_chars"]) == (0, 0, None), m
PY
grep -q '^- Reasoning: none of the 1 records carries reasoning' "$T/cut-sft-field/DATASHEET.md" ||
    fail "datasheet without reasoning: $(grep Reasoning "$T/cut-sft-field/DATASHEET.md")"
"$KC_BIN/kcurate" stats --db "$T/cut.db" | grep -q '^  fake-r1 *1 of 2 with reasoning (50.0%), median 27.0 chars, 1 cut short' ||
    fail "stats (cut): $("$KC_BIN/kcurate" stats --db "$T/cut.db" | grep fake-r1)"

# Dedup ignores reasoning: two samples of each of two problems reach the same kernel by different
# reasoning ({{seed}} differs); one record per problem keeps its representative's reasoning and
# names it. With --dedup none all four records carry reasoning, typed the same.
python3 - "$T" <<'PY'
import json, sys
json.dump({"answers": [{"content": "{{reference}}", "reasoning": "Sample of seed {{seed}}: one thread per element."}]},
          open(sys.argv[1] + "/dedup.json", "w"))
PY
start_server --script "$T/dedup.json"
"$KC_BIN/kcollect" --problems $PROBLEM,level1/020_leaky_relu --samples 2 --endpoint "$URL" --model fake-r1 \
    --db "$T/dedup.db" --turns 1 --compile-only >"$T/dedup.out" 2>&1 || { cat "$T/dedup.out"; fail "kcollect (dedup)"; }
stop_server
"$KC_BIN/kcurate" run --db "$T/dedup.db" >/dev/null
export_one "$T/dedup.db" dedup-sft sft field --verdict compiled
export_one "$T/dedup.db" dedup-all sft field --verdict compiled --dedup none
python3 - "$T" "$T/dedup.db" <<'PY' || fail "dedup and reasoning"
import glob, gzip, hashlib, json, sqlite3, sys
t, db = sys.argv[1], sqlite3.connect(sys.argv[2])
def recs(d):
    return [json.loads(l) for f in sorted(glob.glob(t + "/" + d + "/*.jsonl.gz"))
            for l in gzip.open(f, "rt", encoding="utf-8")]
kept = recs("dedup-sft")
assert len(kept) == 2 and len({r["problem"]["id"] for r in kept}) == 2, [r["problem"] for r in kept]
for r in kept:
    text = r["messages"][-1]["reasoning_content"]
    p = r["provenance"]
    assert p["reasoning_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    (stored,) = db.execute("SELECT CAST(b.data AS TEXT) FROM responses r JOIN blobs b ON"
                           " b.sha256 = r.reasoning_sha WHERE r.id = ?", (p["response_id"],)).fetchone()
    assert stored == text, (stored, text)
everyone = recs("dedup-all")
assert len(everyone) == 4, len(everyone)
for r in everyone:
    assert [type(m["reasoning_content"]).__name__ for m in r["messages"]] == ["NoneType", "NoneType", "str"]
    assert r["labels"]["reasoning_state"] == "complete"
assert len({r["messages"][-1]["reasoning_content"] for r in everyone}) == 2  # seeds 0 and 1
assert len({r["messages"][-1]["content"] for r in everyone if r["problem"]["id"] == "level1/019_relu"}) == 1
PY
# plan: the planner's answer and its reasoning (kcollect --strategy mtmc; the fake server's
# reasoning for each answer is "Turn K: ..."); multiturn carries the planning turns' reasoning
start_server --think field
"$KC_BIN/kcollect" --problems $PROBLEM --endpoint "$URL" --model fake-r1 --db "$T/mtmc.db" --turns 4 \
    --compile-only --strategy mtmc >"$T/mtmc.out" 2>&1 || { cat "$T/mtmc.out"; fail "kcollect mtmc"; }
stop_server
"$KC_BIN/kcurate" run --db "$T/mtmc.db" >/dev/null
for mode in field think; do
    export_one "$T/mtmc.db" "plan-$mode" plan $mode
    export_one "$T/mtmc.db" "mtmc-mt-$mode" multiturn $mode --verdict any
done
python3 - "$T" "$T/mtmc.db" <<'PY' || fail "plan and mtmc reasoning"
import glob, gzip, json, sqlite3, sys
t = sys.argv[1]
def recs(d):
    return [json.loads(l) for f in sorted(glob.glob(t + "/" + d + "/*.jsonl.gz"))
            for l in gzip.open(f, "rt", encoding="utf-8")]
(field,), (think,) = recs("plan-field"), recs("plan-think")
r = "Turn 0: the reference approach, one thread per element."
assert field["reasoning_content"] == r and field["reasoning_state"] == "complete", field
assert field["response"].startswith("Here is my plan.") and "PLAN" in field["response"], field["response"]
assert think["response"] == "<think>\n" + r + "\n</think>\n\n" + field["response"], think["response"]
assert "reasoning_content" not in think
(mt,) = recs("mtmc-mt-field")
answers = [m for m in mt["messages"] if m["role"] == "assistant"]
assert len(answers) >= 2 and answers[0]["content"] == field["response"], answers[0]
sent = [x for (x,) in sqlite3.connect(sys.argv[2]).execute(
    "SELECT CAST(b.data AS TEXT) FROM turns t JOIN responses r ON r.id = t.response_id"
    " JOIN blobs b ON b.sha256 = r.reasoning_sha ORDER BY t.turn_index")]
assert [a["reasoning_content"] for a in answers] == sent, ([a["reasoning_content"] for a in answers], sent)
PY
echo "ok: reasoning in 5 forms x streamed or not x 3 modes, byte for byte; cut, absent, dedup, stats, plan"

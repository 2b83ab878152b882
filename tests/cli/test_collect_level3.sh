#!/bin/sh
# test_collect_level3: the closed loop and the exports on level 3 unchanged (compile-only, the
# bundled fake LLM server): 003 (a @for loop over stacked views) and 016 DenseNet-201 (the
# longest reference: 417 launch lines, 95 KB with its shared kernels). With --bug compile every
# trajectory fails to compile, then compiles and stops; the prompt shows the packed input's
# views with their offsets and PyTorch keys, KernelBench's source and the dims; the feedback and
# the next request carry the compile error and the long answer. With --bug runtime the fake's
# wrong turn (an extra launch on the output) parses against a level-3 problem and compiles. The
# corpus exports as sft, multiturn, rl and kernelbench (modules that parse, KernelBench's own
# source in them).
set -eu
. "$(dirname "$0")/lib.sh"

q() { sqlite3 "$DB" "$1"; }
PROBLEMS=level3/003_deep_narrow_mlp,level3/016_densenet201
DB="$T/a.db"
"$KC_BIN/kcollect" --problems "$PROBLEMS" --db "$DB" --turns 3 --concurrency 2 --compile-only \
    --fake-args "--bug compile" >"$T/out" 2>"$T/err" || fail "kcollect: $(cat "$T/err")"
grep -q "trajectories   2, done 2, solved 2" "$T/out" || fail "summary: $(cat "$T/out")"
[ "$(q "SELECT count(*) FROM trajectories WHERE stop_reason = 'first_compiled'")" = 2 ] ||
    fail "trajectories: $(q 'SELECT problem_id, status, stop_reason FROM trajectories')"
[ "$(q "SELECT count(*) FROM turns t JOIN v_latest_verification v ON v.candidate_id = t.candidate_id
        WHERE (t.turn_index = 0 AND v.verdict = 'compile_error') OR (t.turn_index = 1 AND v.verdict = 'compiled')")" = 4 ] ||
    fail "verdicts per turn: $(q "SELECT turn_index, verdict FROM turns t JOIN v_latest_verification v ON v.candidate_id = t.candidate_id")"
# the spec a model sees: views (offset, key), KernelBench's source, the loop's dims
q "SELECT CAST(b.data AS TEXT) FROM turns t JOIN trajectories j ON j.id = t.trajectory_id
   JOIN blobs b ON b.sha256 = t.prompt_sha WHERE t.turn_index = 0 AND j.problem_id LIKE '%003_%'" >"$T/spec"
for want in "Problem level3/003_deep_narrow_mlp" "fch_w: [L-1, H, H] at params[" "(network.{2*i+2}.weight)" \
    "super(Model, self).__init__()" "def get_init_inputs():" "Dims (usable by name" "L=16"; do
    grep -qF -- "$want" "$T/spec" || fail "the level-3 spec lacks '$want'"
done
# the feedback names the error; turn 1's request carries DenseNet-201's long answer
q "SELECT feedback FROM v_candidate_audit WHERE turn_index = 0" | grep -q undeclared_identifier_kc ||
    fail "feedback of turn 0 lacks the compile error"
q "SELECT CAST(b.data AS TEXT) FROM turns t JOIN trajectories j ON j.id = t.trajectory_id
   JOIN requests r ON r.id = t.request_id JOIN blobs b ON b.sha256 = r.body_sha
   WHERE t.turn_index = 1 AND j.problem_id LIKE '%016_%'" >"$T/body"
[ "$(grep -o '// @launch' "$T/body" | wc -l)" -ge 417 ] && grep -q undeclared_identifier_kc "$T/body" ||
    fail "turn 1's request lacks the 417 launch lines of turn 0's answer or its feedback"

# the runtime bug variant (an extra launch flipping a bit of the output) on level-3 references
DB2="$T/b.db"
"$KC_BIN/kcollect" --problems "$PROBLEMS" --db "$DB2" --turns 2 --compile-only \
    --fake-args "--bug runtime" >"$T/out2" 2>"$T/err2" || fail "kcollect --bug runtime: $(cat "$T/err2")"
[ "$(sqlite3 "$DB2" "SELECT group_concat(v.verdict) FROM turns t JOIN v_latest_verification v
      ON v.candidate_id = t.candidate_id WHERE t.turn_index = 0")" = "compiled,compiled" ] ||
    fail "the runtime-bug turn does not compile on level 3: $(sqlite3 "$DB2" "SELECT verdict, message FROM v_latest_verification")"
sqlite3 "$DB2" "SELECT CAST(b.data AS TEXT) FROM candidates c JOIN blobs b ON b.sha256 = c.source_sha" |
    grep -q '@launch kc_injected_bug<<<1, 1>>>(y)' || fail "the runtime bug's launch is not in the candidates"

# exports
"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run"
ex() { # FORMAT ARGS...: one export into $T/x_FORMAT, its count checked against $N
    f=$1; shift
    "$KC_BIN/kexport" --db "$DB" --out "$T/x_$f" --format "$f" --split train,valid,test,heldout "$@" \
        >"$T/o_$f" 2>"$T/e_$f" || fail "kexport $f: $(cat "$T/e_$f")"
    grep -q "^exported $N $f records" "$T/o_$f" || fail "kexport $f: $(cat "$T/o_$f")"
}
N=4 ex sft --every-turn --verdict any --dedup none
N=2 ex multiturn --verdict any
N=2 ex rl --verdict compiled
N=2 ex kernelbench --verdict compiled
for f in rl kernelbench; do
    "$KC_BIN/kc_jsontypes" "$T"/x_$f/*.jsonl.gz >/dev/null || fail "$f records change types"
done
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3: modules not parsed"; exit 0; }
python3 - "$T/x_kernelbench" "$KC_PROBLEMS" <<'PY' || fail "kernelbench modules"
import ast, glob, json, os, sys
d, root = sys.argv[1], sys.argv[2]
paths = sorted(glob.glob(os.path.join(d, "kernelbench", "level3", "*", "*.py")))
assert len(paths) == 2, paths
for p in paths:
    tree = ast.parse(open(p).read())
    src = [ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
           and getattr(n.targets[0], "id", "") == "KERNELBENCH_SOURCE"]
    m = json.load(open(os.path.join(root, "level3", os.path.basename(os.path.dirname(p)) + ".json")))
    assert src == [m["torch_reference"]], p
PY
echo "ok: level 3 through the loop (compile-only) and the exports"

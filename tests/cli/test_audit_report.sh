#!/bin/sh
# test_audit_report: kcurate report as a person would look at it. A compile-only collection with
# a per-problem budget, given hand-made GPU results (correct, timed on an "H100", one above 10x),
# a flip and a third-party claim, is rendered; the report's numbers are checked in report.json,
# the page is self-contained (no external script, style or link), the same database gives the
# same bytes, every linked kernel page exists with its code; then headless Chromium (Debian's
# chromium, from make deps) loads the page from disk: no console message, every chart drawn
# with data points (the page script writes data-status and data-points into the DOM), and a
# screenshot that is not blank. Chromium parts SKIP only where Chromium cannot run.
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
q() { sqlite3 "$DB" "$1"; }
js() { sqlite3 :memory: "SELECT json_extract(readfile('$T/rep/report.json'), '$1')"; }

start_server --bug compile --delay-ms 10
"$KC_BIN/kcollect" --problems level1/001_square_matmul,level1/019_relu,level1/023_softmax \
    --endpoint "$URL" --model fake-echo --db "$DB" --samples 2 --turns 3 --concurrency 2 \
    --compile-only --problem-budget 5 >"$T/c.out" 2>"$T/c.err" || { cat "$T/c.err"; fail "kcollect"; }
stop_server
# Hand-made GPU results for every compiled kernel: correct, 0.5x to 2.9x, one at 15x.
q "INSERT INTO verifications(candidate_id, verdict, flags, verifier_version, gpu_name)
     SELECT candidate_id, 'correct', '', 'test', 'NVIDIA H100 80GB HBM3' FROM verifications
     WHERE verdict = 'compiled' ORDER BY candidate_id;
   INSERT INTO timings(verification_id, median_ms, stdev_ms, n, speedup_eager, gbps, tflops)
     SELECT id, 1.0, 0.001, 50, 0.5 + (candidate_id % 5) * 0.6, 400 + candidate_id * 100, 0
     FROM verifications WHERE verdict = 'correct';
   UPDATE timings SET speedup_eager = 15 WHERE id = (SELECT max(id) FROM timings);"
# A flip: the first compiled verdict turned into a compile error by hand.
q "UPDATE verifications SET verdict = 'compile_error' WHERE id = (SELECT min(id) FROM verifications WHERE verdict = 'compiled')"
printf '{"problem_id": "level1/019_relu", "code": "extern \\"C\\" __global__ void k() {}\\n", "claimed_correct": true, "source": "lab-x"}\n' >"$T/c.jsonl"
"$KC_BIN/kverify" import --db "$DB" --jsonl "$T/c.jsonl" >/dev/null || fail "import"

"$KC_BIN/kcurate" report --db "$DB" --out "$T/rep" >"$T/r.out" 2>"$T/r.err" || { cat "$T/r.err"; fail "kcurate report"; }
for f in index.html report.json; do [ -s "$T/rep/$f" ] || fail "missing $f"; done
# The numbers: 3 problems, all solved within the budget; the solve curve steps once per problem.
[ "$(js '$.solve_minutes[0].problems') $(js '$.solve_minutes[0].solved')" = "3 3" ] || fail "solve_minutes: $(js '$.solve_minutes')"
[ "$(js '$.solve_minutes[0].points[3][1]')" = 1.0 ] || fail "solve curve: $(js '$.solve_minutes[0].points')"
[ "$(js '$.problem_budget_minutes')" = 5.0 ] || fail "budget"
[ "$(js '$.fast_p[0].values."0"')" = 1.0 ] || fail "fast_0: $(js '$.fast_p')"
[ "$(sqlite3 :memory: "SELECT json_array_length(readfile('$T/rep/report.json'), '$.problems')")" = 3 ] || fail "problem rows"
[ "$(sqlite3 :memory: "SELECT json_array_length(readfile('$T/rep/report.json'), '$.flips.flips')")" = 1 ] || fail "flips: $(js '$.flips')"
[ "$(js '$.suspicious[0].reason')" = "eager speedup above 10x" ] || fail "suspicious: $(js '$.suspicious')"
[ "$(js '$.speedup_hist.n')" -gt 0 ] && [ "$(js '$.roofline_hist.n')" -gt 0 ] || fail "histograms empty"
[ "$(js '$.cost[0].tokens_in')" = "$(q 'SELECT sum(tokens_in) FROM turns').0" ] || fail "tokens: $(js '$.cost')"
# Self-contained: no external script, stylesheet, image or frame.
grep -Eqi '<(script|img|iframe)[^>]* src=|<link ' "$T/rep/index.html" && fail "the page loads something from outside"
grep -q 'Chart.js v3' "$T/rep/index.html" || fail "Chart.js not inlined"
# Every kernel the table links exists and shows its code and evidence.
for id in $(sqlite3 :memory: "SELECT value FROM json_each(json_extract(readfile('$T/rep/report.json'), '$.kernels'))"); do
    [ -s "$T/rep/kernels/c$id.html" ] || fail "kernel page c$id missing"
done
best=$(js '$.problems[1].best_candidate')
grep -q '@launch' "$T/rep/kernels/c$best.html" && grep -q 'Verifications (oldest first)' "$T/rep/kernels/c$best.html" \
    || fail "kernel page content"
# Deterministic: the same database gives the same files.
"$KC_BIN/kcurate" report --db "$DB" --out "$T/rep2" >/dev/null || fail "second report"
diff -r "$T/rep" "$T/rep2" >/dev/null || fail "two reports of one database differ"

# Fraction of peak by dtype: a bf16 problem's kernel at 500 TFLOP/s is measured against the
# dense tensor-core peak (989 on an H100 SXM: 50-60%; against the FP32 CUDA-core peak of 67 it
# would be >100%), an fp32 problem's at 30 TFLOP/s against the FP32 CUDA-core peak (40-50%).
PDB="$T/peak.db"
printf 'extern "C" __global__ void k(void *out) {}\n// @launch k<<<1, 1>>>(out);\n' >"$T/k.cu"
for p in attention/001_causal attention/002_causal_fp32; do
    "$KC_BIN/kverify" import --db "$PDB" --problem "$p" "$T/k.cu" >/dev/null || fail "import $p"
done
sqlite3 "$PDB" "INSERT INTO verifications(candidate_id, verdict, flags, verifier_version, gpu_name)
     SELECT id, 'correct', '', 'test', 'NVIDIA H100 80GB HBM3' FROM candidates ORDER BY id;
   INSERT INTO timings(verification_id, median_ms, stdev_ms, n, speedup_eager, gbps, tflops)
     SELECT v.id, 1.0, 0.001, 50, 2.0, 100, CASE c.problem_id WHEN 'attention/001_causal' THEN 500 ELSE 30 END
     FROM verifications v JOIN candidates c ON c.id = v.candidate_id;"
"$KC_BIN/kcurate" report --db "$PDB" --out "$T/prep" >/dev/null 2>"$T/p.err" || { cat "$T/p.err"; fail "report of peak.db"; }
pj() { sqlite3 :memory: "SELECT json_extract(readfile('$T/prep/report.json'), '$1')"; }
[ "$(pj '$.roofline_hist.counts')" = "[0,0,0,0,1,1,0,0,0,0,0]" ] \
    || fail "roofline buckets (bf16 50-60%, f32 40-50%): $(pj '$.roofline_hist')"
[ "$(pj '$.problems[0].dtype') $(pj '$.problems[0].peak') $(pj '$.problems[0].best_tflops') $(pj '$.problems[0].peak_tflops')" \
    = "bf16 dense tensor-core 500.0 989.0" ] || fail "bf16 problem row: $(pj '$.problems[0]')"
[ "$(pj '$.problems[1].dtype') $(pj '$.problems[1].peak') $(pj '$.problems[1].peak_tflops')" = "f32 FP32 CUDA-core 67.0" ] \
    || fail "f32 problem row: $(pj '$.problems[1]')"
awk -v f="$(pj '$.problems[0].peak_fraction')" 'BEGIN { exit !(f > 0.505 && f < 0.506) }' \
    || fail "bf16 fraction of peak: $(pj '$.problems[0].peak_fraction')"
grep -q '<td class="n">50.6% of 989 (dense tensor-core)</td>' "$T/prep/index.html" \
    || fail "the table does not show the bf16 kernel's fraction of the tensor-core peak"
grep -q '<td class="n">44.8% of 67 (FP32 CUDA-core)</td>' "$T/prep/index.html" \
    || fail "the table does not show the f32 kernel's fraction of the FP32 peak"
grep -q 'dense tensor-core peak (f16/bf16 problems)' "$T/prep/index.html" || fail "the roofline chart does not name its peaks"
# Without a FLOP count (level-1 rows above have tflops 0) no TFLOP/s or fraction is claimed.
[ "$(js '$.problems[0].best_tflops')" = "" ] && [ "$(js '$.problems[0].peak')" = "FP32 CUDA-core" ] \
    || fail "level-1 row: $(js '$.problems[0]')"

# ---- in a browser ----
if ! command -v chromium >/dev/null 2>&1; then
    echo "SKIP: chromium is not installed (make deps installs it): browser checks not run"
    exit 0
fi
browse() { # out-prefix url extra-args...
    o=$1; u=$2; shift 2
    timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
        --no-first-run --user-data-dir="$T/chrome-$o" --enable-logging=stderr --v=0 \
        --virtual-time-budget=5000 "$@" "$u" >"$T/$o.dom" 2>"$T/$o.log"
}
if ! browse probe 'data:text/html,<p id=probe>ok</p>' --dump-dom || ! grep -q 'id="probe"' "$T/probe.dom"; then
    echo "SKIP: Chromium cannot run here: $(tail -3 "$T/probe.log")"
    exit 0
fi
# The console check can see errors: a page with an uncaught one is caught.
printf '<html><body><script>no_such_function();</script></body></html>' >"$T/bad.html"
browse bad "file://$T/bad.html" --dump-dom || true
grep -q 'CONSOLE.*no_such_function' "$T/bad.log" || fail "the console check does not see console errors"

browse page "file://$T/rep/index.html" --dump-dom || fail "chromium failed on the report: $(tail -5 "$T/page.log")"
grep -q 'CONSOLE' "$T/page.log" && fail "console messages: $(grep CONSOLE "$T/page.log")"
grep -q '<body data-status="ok" data-charts="7"' "$T/page.dom" \
    || fail "page status: $(grep -o '<body[^>]*>' "$T/page.dom")"
for c in solve_minutes solve_turns fast_p verdict_mix speedup_hist roofline_hist cost; do
    n=$(sed -n "s/.*data-chart=\"$c\" data-points=\"\([0-9]*\)\".*/\1/p" "$T/page.dom")
    [ "${n:-0}" -gt 0 ] || fail "chart $c has no data points (${n:-none})"
done
grep -q '<canvas[^>]*height=' "$T/page.dom" || fail "no canvas was sized by Chart.js"
browse shot "file://$T/rep/index.html" --hide-scrollbars --window-size=1280,1600 --screenshot="$T/shot.png" \
    || fail "screenshot failed: $(tail -5 "$T/shot.log")"
size=$(wc -c <"$T/shot.png")
# A blank 1280x1600 page compresses to a few KB; the charts make it tens of KB.
[ "$size" -gt 30000 ] || fail "the screenshot looks blank ($size bytes)"
[ -n "${KC_AUDIT_SHOT:-}" ] && cp "$T/shot.png" "$KC_AUDIT_SHOT"
echo "ok: test_audit_report (screenshot $size bytes)"

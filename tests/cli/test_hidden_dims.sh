#!/bin/sh
# test_hidden_dims: kverify problems --check validates hidden-dims generators (1,000 draws per
# attention manifest), refuses a manifest without "hidden", without its value classes
# ("values") or with a param without "vary", and --draw prints the same JSON lines for the same
# seed; --boundary and --stratified print a seed's coverage sets under the names dump takes.
set -u
. "$(dirname "$0")/lib.sh"
kv="$KC_BIN/kverify"

out=$("$kv" problems --suite attention --check) || fail "attention --check: $(echo "$out" | grep -A3 FAIL)"
n=$(ls "$KC_PROBLEMS/attention"/*.json | wc -l)
echo "$out" | grep -qx "$n generators, 1000 draws each, all valid" || fail "generator summary: $out"
echo "$out" | tail -1 | grep -qx "$n problems, $n references compiled" || fail "last line: $out"

# --draw: JSON lines, one per index, the same for the same seed, other dims for another seed
"$kv" problems --draw attention/008_gqa_causal --seed 42 --count 5 >"$T/a.jsonl" || fail "--draw"
"$kv" problems --draw attention/008_gqa_causal --seed 42 --count 5 >"$T/b.jsonl" || fail "--draw again"
"$kv" problems --draw attention/008_gqa_causal --seed 43 --count 5 >"$T/c.jsonl" || fail "--draw seed 43"
[ "$(wc -l <"$T/a.jsonl")" -eq 5 ] || fail "--count 5 printed $(wc -l <"$T/a.jsonl") lines"
cmp -s "$T/a.jsonl" "$T/b.jsonl" || fail "--draw is not deterministic"
cmp -s "$T/a.jsonl" "$T/c.jsonl" && fail "seeds 42 and 43 drew the same dims"
head -1 "$T/a.jsonl" | grep -q '^{"id":"attention/008_gqa_causal","seed":42,"index":0,"dims":{"B":[0-9]*,"HQ":[0-9]*,"HKV":[0-9]*,"S":[0-9]*,"D":[0-9]*}}$' ||
    fail "--draw line: $(head -1 "$T/a.jsonl")"
while read -r line; do
    hq=$(echo "$line" | sed 's/.*"HQ":\([0-9]*\).*/\1/'); hkv=$(echo "$line" | sed 's/.*"HKV":\([0-9]*\).*/\1/')
    [ $((hq % hkv)) -eq 0 ] || fail "HKV does not divide HQ: $line"
done <"$T/a.jsonl"
"$kv" problems --draw attention/001_causal --count x >/dev/null 2>&1 && fail "--count x accepted"

# --boundary / --stratified: the sets a verification with that seed runs, named as dump takes them
"$kv" problems --boundary level1/019_relu --seed 5 >"$T/b5.jsonl" || fail "--boundary"
"$kv" problems --boundary level1/019_relu --seed 5 >"$T/b5b.jsonl" || fail "--boundary again"
cmp -s "$T/b5.jsonl" "$T/b5b.jsonl" || fail "--boundary is not deterministic"
python3 - "$T/b5.jsonl" <<'PY' || fail "--boundary lines: $(head -3 "$T/b5.jsonl")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) >= 10, len(rows)
assert [r["name"] for r in rows] == ["bound%d" % i for i in range(len(rows))]
assert all(r["id"] == "level1/019_relu" and r["seed"] == 5 for r in rows)
sizes = [r["dims"]["B"] * r["dims"]["D"] for r in rows]
assert min(sizes) == 1, "no set at the low end"
assert max(sizes) > 2 ** 31, "no capacity set past 2^31 elements"
PY
"$kv" problems --stratified level1/019_relu --seed 5 >"$T/s5.jsonl" || fail "--stratified"
"$kv" problems --stratified level1/019_relu --seed 6 >"$T/s6.jsonl" || fail "--stratified seed 6"
cmp -s "$T/s5.jsonl" "$T/s6.jsonl" && fail "seeds 5 and 6 gave the same stratified sets"
head -1 "$T/s5.jsonl" | grep -q '^{"id":"level1/019_relu","seed":5,"name":"strat0","dims":{"B":[0-9]*,"D":[0-9]*}}$' ||
    fail "--stratified line: $(head -1 "$T/s5.jsonl")"
[ "$(wc -l <"$T/s5.jsonl")" -ge 10 ] || fail "--stratified printed $(wc -l <"$T/s5.jsonl") sets"
"$kv" dump --problem level1/019_relu --dims bound3,stratx --out "$T/d" >"$T/dump.out" 2>&1 && fail "dump took stratx"
grep -q "boundK or stratK" "$T/dump.out" || fail "dump's --dims message: $(cat "$T/dump.out")"

# a manifest without a generator, or with a constant input without "vary": refused
mkdir -p "$T/p/level1"
cp "$KC_PROBLEMS/level1/019_relu.cu" "$T/p/level1/"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); m.pop("hidden"); json.dump(m, open(sys.argv[2], "w"))' \
    "$KC_PROBLEMS/level1/019_relu.json" "$T/p/level1/019_relu.json"
KC_PROBLEMS="$T/p" "$kv" problems --suite level1 --check >"$T/strict.out" 2>&1 &&
    fail "a manifest without hidden passed --check: $(cat "$T/strict.out")"
grep -q 'no "hidden" generator' "$T/strict.out" || fail "strict report: $(cat "$T/strict.out")"
grep -q "1 manifests without a generator, a vary or the value classes" "$T/strict.out" || fail "summary: $(cat "$T/strict.out")"
KC_PROBLEMS="$T/p" "$kv" problems --draw level1/019_relu >"$T/none.out" 2>&1 && fail "--draw without a generator succeeded"
grep -q 'no "hidden" generator' "$T/none.out" || fail "--draw without a generator: $(cat "$T/none.out")"
KC_PROBLEMS="$T/p" "$kv" problems --boundary level1/019_relu >"$T/none.out" 2>&1 && fail "--boundary without a generator succeeded"
grep -q 'no "hidden" generator' "$T/none.out" || fail "--boundary without a generator: $(cat "$T/none.out")"

# a manifest without its value classes, or with a param without "vary", loads but is refused
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); m.pop("values"); json.dump(m, open(sys.argv[2], "w"))' \
    "$KC_PROBLEMS/level1/019_relu.json" "$T/p/level1/019_relu.json"
KC_PROBLEMS="$T/p" "$kv" problems --suite level1/019_relu >"$T/list.out" 2>&1 ||
    fail "a manifest without values does not load: $(cat "$T/list.out")"
KC_PROBLEMS="$T/p" "$kv" problems --suite level1 --check >"$T/values.out" 2>&1 &&
    fail "a manifest without values passed --check: $(cat "$T/values.out")"
grep -q 'no "values" (declare large, structure and special' "$T/values.out" || fail "values report: $(cat "$T/values.out")"
mkdir -p "$T/q/level1"
cp "$KC_PROBLEMS/level1/020_leaky_relu.cu" "$T/q/level1/"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); [p.pop("vary", None) for p in m["params"]]; json.dump(m, open(sys.argv[2], "w"))' \
    "$KC_PROBLEMS/level1/020_leaky_relu.json" "$T/q/level1/020_leaky_relu.json"
KC_PROBLEMS="$T/q" "$kv" problems --suite level1 --check >"$T/vary.out" 2>&1 &&
    fail "a param without vary passed --check: $(cat "$T/vary.out")"
grep -q "params\[0\] 'negative_slope': no \"vary\"" "$T/vary.out" || fail "vary report: $(cat "$T/vary.out")"
echo ok

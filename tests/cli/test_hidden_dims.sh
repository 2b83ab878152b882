#!/bin/sh
# test_hidden_dims: kverify problems --check validates hidden-dims generators (1,000 draws per
# attention manifest), refuses a manifest without "hidden", without its value classes
# ("values") or with a param without "vary", and --draw prints the same JSON lines for the same
# seed.
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

#!/bin/sh
# test_export_types: every field of every export format keeps one JSON type across all records
# and shards (what pyarrow.json.read_json and datasets.load_dataset("json") need). A synthetic
# database holding every verdict (compiled included), every flag, three suites with dims of
# other names and params, answers with and without reasoning, the verifier's evidence with worst
# values that are numbers in one record and "nan" strings in another, infinite errors, timings
# without baselines and imported kernels (kc_synth --every-kind) is exported in all four formats
# (and sft and multiturn in other --reasoning modes) into many small shards, and
# kc_jsontypes checks each format's shards together: one type per JSON path, the same keys in
# every object at a path, no field inside a list of objects null in every record of a shard; a
# compile-only database (no timing, error or evidence at all) is exported too.
set -eu
. "$(dirname "$0")/lib.sh"

"$KC_BIN/kc_synth" --db "$T/a.db" --candidates 500 --problems 9 --seed 3 --every-kind
"$KC_BIN/kcurate" run --db "$T/a.db" --heldout 'level2/004_synth_op' >/dev/null

DB="$T/a.db"
# reasoning_content (kexport --reasoning field, the default) is null where the model gave no
# reasoning, so in every record of a shard without any: pyarrow 25.0.1 reads that (measured)
jsontypes() {
    "$KC_BIN/kc_jsontypes" --null-ok '$.messages[].reasoning_content' \
        --null-ok '$.chosen[].reasoning_content' --null-ok '$.rejected[].reasoning_content' "$@"
}
export_format() { # NAME kexport-options...
    name=$1; shift
    "$KC_BIN/kexport" --db "$DB" --out "$T/$name" --shard-mb 0.04 \
        --split train,valid,test,heldout "$@" >"$T/$name.out" || fail "kexport $name: $(cat "$T/$name.out")"
    n=$(ls "$T/$name"/*.jsonl.gz | wc -l)
    [ "$n" -ge 2 ] || fail "$name: expected several shards, got $n"
    jsontypes "$T/$name"/*.jsonl.gz >"$T/$name.types" ||
        fail "$name: types differ between records: $(head -20 "$T/$name.types")"
}

export_format sft-any --format sft --every-turn --verdict any --dedup none
export_format sft --format sft
export_format multiturn --format multiturn
export_format rl --format rl
export_format preference --format preference
export_format sft-think --format sft --every-turn --verdict any --dedup none --reasoning think
export_format multiturn-drop --format multiturn --reasoning drop

# a compile-only run (no GPU): no timing, error or evidence anywhere; no field inside multiturn's
# turns may then be null in every record of a shard (pyarrow's JSON reader fails on that)
"$KC_BIN/kc_synth" --db "$T/c.db" --candidates 200 --problems 5 --seed 2 --every-kind
sqlite3 "$T/c.db" "UPDATE verifications SET verdict = 'compiled', flags = '', max_abs_err = NULL,
    max_rel_err = NULL, rel_l2_err = NULL, evidence_json = NULL; DELETE FROM timings;"
"$KC_BIN/kcurate" run --db "$T/c.db" >/dev/null
DB="$T/c.db"
export_format mt-compiled --format multiturn --verdict any
export_format sft-compiled --format sft --verdict compiled

# the database holds what the test claims: all verdicts, all flags, all suites, non-finite
# errors, evidence with string and number worst values, imported kernels
zcat "$T/sft-any"/*.jsonl.gz "$T/multiturn"/*.jsonl.gz >"$T/all.jsonl"
for v in extract_error policy_violation compile_error launch_error runtime_error timeout mismatch \
    unsafe correct compiled; do
    grep -q "\"verdict\":\"$v\"" "$T/all.jsonl" || fail "no $v record in the every-kind export"
done
for f in alt_shape_fail nondeterministic suspicious_speedup; do
    grep -q "\"flags\":\"[^\"]*$f" "$T/all.jsonl" || fail "no record flagged $f"
done
for s in level1 level2 attention; do
    grep -q "\"id\":\"$s/" "$T/all.jsonl" || fail "no $s problem"
done
grep -q '"nonfinite":"max_abs_err=inf' "$T/all.jsonl" || fail "an infinite error is not named in nonfinite"
grep -q '\\"got\\":\\"nan\\"' "$T/all.jsonl" || fail "evidence with a nan worst value missing"
grep -q '\\"got\\":1.5' "$T/all.jsonl" || fail "evidence with a number worst value missing"
grep -q '"origin":"import"' "$T/all.jsonl" || fail "no imported kernel"
grep -q '"run":null' "$T/all.jsonl" || fail "no record without a run"

# rl: dims and params of differently named problems in one list shape; ground_truth is JSON text
zcat "$T/rl"/*.jsonl.gz | grep -q '"dims":\[{"name":"Dh","value":128}\]' && fail "dims list truncated"
zcat "$T/rl"/*.jsonl.gz | grep -q '{"name":"Dh","value":128}' || fail "attention dims not listed"
zcat "$T/rl"/*.jsonl.gz | grep -q '"params":\[{"name":"window","dtype":"i32","value":256.0}' ||
    fail "params not a list of reals"
zcat "$T/rl"/*.jsonl.gz | grep -q '"ground_truth":"{\\"problem_id\\"' || fail "ground_truth not JSON text"

# the checker itself catches a type change and a missing key
printf '{"a":1,"b":{"c":"x"}}\n{"a":"1","b":{"c":"y"}}\n' >"$T/bad1.jsonl"
"$KC_BIN/kc_jsontypes" "$T/bad1.jsonl" >"$T/bad1.out" && fail "kc_jsontypes accepted a number/string field"
grep -q '^\$.a: string here, integer before' "$T/bad1.out" || fail "conflict not described: $(cat "$T/bad1.out")"
printf '{"b":{"c":1.5}}\n' >"$T/bad2a.jsonl"; printf '{"b":{"c":2}}\n{"b":{"d":null}}\n' >"$T/bad2b.jsonl"
"$KC_BIN/kc_jsontypes" "$T/bad2a.jsonl" "$T/bad2b.jsonl" >"$T/bad2.out" && fail "kc_jsontypes accepted real/integer across files"
grep -q 'integer here, real before' "$T/bad2.out" || fail "integer/real not told apart"
grep -q 'keys {d} here, {c} before' "$T/bad2.out" || fail "differing keys not found"
printf '{"l":[{"x":null,"y":1}]}\n{"l":[{"x":null,"y":2}]}\n' >"$T/bad3.jsonl"
"$KC_BIN/kc_jsontypes" "$T/bad3.jsonl" >"$T/bad3.out" && fail "kc_jsontypes accepted an always-null field in a list"
grep -q '^\$.l\[\].x: null in every record' "$T/bad3.out" || fail "always-null list field not named: $(cat "$T/bad3.out")"
"$KC_BIN/kc_jsontypes" --null-ok '$.l[].x' "$T/bad3.jsonl" >/dev/null || fail "--null-ok did not allow the path"
printf '{"a":null}\n{"a":3}\n' >"$T/ok.jsonl"
"$KC_BIN/kc_jsontypes" "$T/ok.jsonl" >/dev/null || fail "null beside a number is allowed"
echo "ok: one JSON type per path in sft, multiturn, rl and preference exports"

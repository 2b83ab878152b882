#!/bin/sh
# test_export_counts: the provenance counts of an export are of what was exported (issue 35,
# item 1). A database of two bundled runs (synthetic) and a run against an endpoint (not): in
# every format, each run's "records" in manifest.json is the number of exported records that
# draw on it (a record counts once per run however many of its parts come from it: an rl
# record draws on every run of its problem, a preference pair on its two sides' runs),
# synthetic_records is the number of exported records marked synthetic (rl said 2x the records),
# records_several_runs those that draw on more than one run, and kexport's warning and the
# datasheet say the same numbers.
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
P=level1/019_relu,level1/023_softmax,level1/021_sigmoid
for seed in 1 2; do
    env -u OPENAI_BASE_URL "$KC_BIN/kcollect" --problems "$P" --db "$DB" --compile-only --turns 2 \
        --seed $seed --fake-args "--bug compile" >/dev/null 2>"$T/e" || fail "bundled run $seed: $(cat "$T/e")"
done
start_server
"$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model real-model --db "$DB" \
    --compile-only --turns 1 >/dev/null 2>"$T/e" || fail "endpoint run: $(cat "$T/e")"
stop_server
[ "$(sqlite3 "$DB" 'SELECT count(*) FROM runs')" = 3 ] || fail "expected 3 runs"
# correct labels (race-checked) so that preference pairs exist without a GPU
sqlite3 "$DB" "UPDATE verifications SET verdict = 'correct' WHERE verdict = 'compiled';
    INSERT INTO race_checks(verification_id, tool, result, verifier_version)
    SELECT id, 'test', 'clean', 'test' FROM verifications WHERE verdict = 'correct'"
"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run"

# m DIR PATH: a manifest value
m() { sqlite3 :memory: "SELECT json_extract(readfile('$1/manifest.json'), '\$.$2')"; }
# recs DIR SQL: SQL over the exported records in table r(j)
recs() {
    cat "$1"/*.jsonl >"$1.all"
    sqlite3 :memory: "CREATE TABLE r AS SELECT value AS j FROM json_each('[' ||
        replace(rtrim(CAST(readfile('$1.all') AS TEXT), char(10)), char(10), ',') || ']'); $2"
}
# The run ids a record draws on, per format: a JSON list built from the record.
runs_of() {
    case $1 in
    sft|kernelbench) echo "json_array(json_extract(j, '\$.provenance.run.run_id'))" ;;
    multiturn|plan) echo "json_array(json_extract(j, '\$.provenance.run.run_id'))" ;;
    preference) echo "json_array(json_extract(j, '\$.provenance.chosen.run.run_id'), json_extract(j, '\$.provenance.rejected.run.run_id'))" ;;
    esac
}
X="--db $DB --no-gzip --split train,valid,test,heldout --dedup none"
for fmt in rl preference sft multiturn kernelbench; do
    D="$T/$fmt"
    "$KC_BIN/kexport" $X --out "$D" --format $fmt --verdict any >/dev/null 2>"$D.err" ||
        { cat "$D.err"; fail "$fmt export"; }
    n=$(m "$D" counts.records)
    [ "$n" -gt 0 ] || fail "$fmt: no records"
    if [ $fmt = rl ]; then
        # an rl record draws on every run whose candidates of its problem it counts
        syn=$(recs "$D" "SELECT count(*) FROM r WHERE json_extract(j, '\$.extra_info.synthetic')")
        for id in 1 2 3; do
            want=$(sqlite3 "$DB" "SELECT count(DISTINCT tr.problem_id) FROM trajectories tr WHERE tr.run_id = $id")
            got=$(sqlite3 :memory: "SELECT coalesce((SELECT json_extract(value, '\$.records') FROM
                json_each(json_extract(readfile('$D/manifest.json'), '\$.provenance.runs'))
                WHERE json_extract(value, '\$.id') = $id), 0)")
            [ "$got" = "$want" ] || fail "rl: run $id counts $got records, $want draw on it"
        done
        several=$(sqlite3 "$DB" "SELECT count(*) FROM (SELECT problem_id FROM trajectories
            GROUP BY problem_id HAVING count(DISTINCT run_id) > 1)")
    else
        R=$(runs_of $fmt)
        syn=$(recs "$D" "SELECT count(*) FROM r WHERE EXISTS (SELECT 1 FROM json_each($R) x
            WHERE x.value IN (1, 2))")
        several=$(recs "$D" "SELECT count(*) FROM r WHERE (SELECT count(DISTINCT x.value) FROM json_each($R) x) > 1")
        for id in 1 2 3; do
            want=$(recs "$D" "SELECT count(*) FROM r WHERE EXISTS (SELECT 1 FROM json_each($R) x WHERE x.value = $id)")
            got=$(sqlite3 :memory: "SELECT coalesce((SELECT json_extract(value, '\$.records') FROM
                json_each(json_extract(readfile('$D/manifest.json'), '\$.provenance.runs'))
                WHERE json_extract(value, '\$.id') = $id), 0)")
            [ "$got" = "$want" ] || fail "$fmt: run $id counts $got records, $want exported records draw on it"
        done
    fi
    [ "$syn" -le "$n" ] || fail "$fmt: $syn synthetic of $n records?"
    [ "$(m "$D" provenance.synthetic_records)" = "$syn" ] ||
        fail "$fmt: synthetic_records $(m "$D" provenance.synthetic_records), $syn of the $n exported records are synthetic"
    grep -q "warning: $syn records come from synthetic runs" "$D.err" ||
        fail "$fmt: the warning does not count the exported records: $(grep synthetic "$D.err")"
    grep -q "^\*\*Synthetic data.\*\* $syn records come from" "$D/DATASHEET.md" ||
        fail "$fmt: the datasheet does not count the exported records: $(grep Synthetic "$D/DATASHEET.md")"
    [ "$(m "$D" provenance.records_several_runs)" = "$several" ] ||
        fail "$fmt: records_several_runs $(m "$D" provenance.records_several_runs), expected $several"
done
echo ok

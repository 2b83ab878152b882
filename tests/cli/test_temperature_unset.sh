#!/bin/sh
# test_temperature_unset: an unset temperature (the server's default) is null in runs.config_json,
# in every export's sampling_json, and "unset" in kcollect's messages, never the -1 that stands
# for it inside (issue 24); the run identity is unchanged, so the same command still continues
# a run recorded before.
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
run() { "$KC_BIN/kcollect" --problems level1/019_relu --compile-only --turns 1 --db "$DB" "$@"; }
run >"$T/o1" 2>"$T/e1" || fail "run: $(cat "$T/e1")"
[ "$(sqlite3 "$DB" "SELECT json_type(config_json, '\$.sampling.temperature') FROM runs")" = null ] \
    || fail "config_json temperature: $(sqlite3 "$DB" "SELECT json_extract(config_json, '\$.sampling') FROM runs")"
# a run written with -1 (as before) is still continued by the same command
sqlite3 "$DB" "UPDATE runs SET config_json = json_set(config_json, '\$.sampling.temperature', -1.0)"
run >"$T/o2" 2>"$T/e2" || fail "rerun: $(cat "$T/e2")"
grep -q "continuing run 1" "$T/e2" || fail "the same command did not continue the run: $(cat "$T/e2")"
sqlite3 "$DB" "UPDATE runs SET config_json = json_set(config_json, '\$.sampling.temperature', json('null'))"
run --temperature 0.5 >"$T/o3" 2>"$T/e3" || fail "run with a temperature: $(cat "$T/e3")"
grep -q "sampling.temperature unset -> 0.5" "$T/e3" || fail "the new-run message: $(grep 'new run' "$T/e3")"
! grep -q -- "-1" "$T/e3" || fail "-1 in the messages: $(cat "$T/e3")"
"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run"
for fmt in sft multiturn; do
    "$KC_BIN/kexport" --db "$DB" --out "$T/$fmt" --format $fmt --verdict any --run 1 --no-gzip >/dev/null 2>"$T/e" \
        || fail "kexport $fmt: $(cat "$T/e")"
    grep -q 'temperature\\":null' "$T"/$fmt/*.jsonl || fail "$fmt: sampling_json temperature is not null: $(grep -o 'sampling_json[^}]*' "$T"/$fmt/*.jsonl | head -1)"
    ! grep -q 'temperature\\":-1' "$T"/$fmt/*.jsonl || fail "$fmt: -1 exported"
done
echo ok

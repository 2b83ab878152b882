#!/bin/sh
# test_stats_json: kcurate stats --json (issue 24): database counts, tokens in and out, cost, the
# text's tables, and one row per run with its model, endpoint, synthetic flag, tokens and cost,
# matching the database; every table value is typed: counts JSON integers, ratios and means JSON
# numbers, or null when unknown (no formatted text such as "0 of 3 (0.0%)").
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
start_server
"$KC_BIN/kcollect" --problems level1/019_relu,level1/023_softmax --endpoint "$URL" --model m \
    --db "$DB" --compile-only --turns 1 --price 3,15 >"$T/o" 2>"$T/e" || fail "kcollect: $(cat "$T/e")"
stop_server
"$KC_BIN/kcollect" --problems level1/019_relu --db "$DB" --compile-only --turns 1 >"$T/o" 2>"$T/e" \
    || fail "bundled kcollect: $(cat "$T/e")"
"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run"
"$KC_BIN/kcurate" stats --db "$DB" --json >"$T/s.json" 2>"$T/e" || fail "stats --json: $(cat "$T/e")"
j() { sqlite3 :memory: "SELECT json_extract(readfile('$T/s.json'), '$1')"; }
q() { sqlite3 "$DB" "$1"; }
[ "$(j '$.database.candidates')" = "$(q 'SELECT count(*) FROM candidates')" ] || fail "candidates: $(j '$.database')"
[ "$(j '$.tokens.in')" = "$(q 'SELECT sum(tokens_in) FROM turns')" ] || fail "tokens in: $(j '$.tokens')"
[ "$(j '$.tokens.out')" = "$(q 'SELECT sum(tokens_out) FROM turns')" ] || fail "tokens out: $(j '$.tokens')"
[ "$(sqlite3 :memory: "SELECT abs(json_extract(readfile('$T/s.json'), '\$.cost_usd') - $(q 'SELECT sum(cost_usd) FROM turns')) < 1e-9
     AND json_extract(readfile('$T/s.json'), '\$.cost_usd') > 0")" = 1 ] || fail "cost: $(j '$.cost_usd')"
[ "$(j '$.verdict_classes.compiled')" = "$(q "SELECT count(*) FROM candidate_labels WHERE verdict_class = 'compiled'")" ] \
    || fail "verdict classes: $(j '$.verdict_classes')"
[ "$(j '$.runs[0].model') $(j '$.runs[0].synthetic') $(j '$.runs[1].model') $(j '$.runs[1].synthetic')" = "m 0 fake-echo 1" ] \
    || fail "runs: $(j '$.runs')"
[ "$(j '$.runs[0].turns')" = 2 ] && [ "$(j '$.runs[1].cost_usd')" = 0.0 ] || fail "run rows: $(j '$.runs')"
t() { sqlite3 :memory: "SELECT json_type(readfile('$T/s.json'), '$1')"; }
[ "$(t '$.trajectories.solved') $(j '$.trajectories.solved')" = "integer $(q 'SELECT sum(solved) FROM trajectory_labels')" ] \
    || fail "trajectories solved: $(j '$.trajectories')"
[ "$(t '$.trajectories.total') $(j '$.trajectories.total')" = "integer $(q 'SELECT count(*) FROM trajectory_labels')" ] \
    || fail "trajectories total: $(j '$.trajectories')"
[ "$(t '$.trajectories."solved fraction"')" = real ] || fail "solved fraction: $(j '$.trajectories')"
[ "$(t '$.trajectories."solved, compile-only"') $(j '$.trajectories."solved, compile-only"')" = "integer 3" ] \
    || fail "solved, compile-only: $(j '$.trajectories')"
# nothing ran on a GPU: no trajectory is solved, so the means are unknown
[ "$(t '$.trajectories."mean first correct turn"') $(t '$.trajectories."mean best speedup"')" = "null null" ] \
    || fail "means over no solved trajectory: $(j '$.trajectories')"
# no table holds a text value
texts=$(sqlite3 :memory: "SELECT group_concat(fullkey, ' ') FROM json_tree(readfile('$T/s.json')) WHERE type = 'text'
     AND fullkey GLOB '\$.[a-z]*.*' AND fullkey NOT GLOB '\$.runs*' AND fullkey NOT GLOB '\$.metrics*'")
[ -z "$texts" ] || fail "table values as text: $texts"
# an empty database: the fraction of no trajectory is unknown, not 0
"$KC_BIN/kcollect" --problems level1/019_relu --db "$T/e.db" --compile-only --turns 1 >"$T/o" 2>"$T/e" \
    || fail "kcollect e.db: $(cat "$T/e")"
sqlite3 "$T/e.db" "DELETE FROM turns; DELETE FROM candidates; DELETE FROM trajectories" || fail "emptying e.db"
"$KC_BIN/kcurate" run --db "$T/e.db" >/dev/null || fail "kcurate run e.db"
"$KC_BIN/kcurate" stats --db "$T/e.db" --json >"$T/s.json" 2>"$T/e" || fail "stats --json e.db: $(cat "$T/e")"
[ "$(j '$.trajectories.total') $(t '$.trajectories."solved fraction"')" = "0 null" ] || fail "empty: $(j '$.trajectories')"
echo ok

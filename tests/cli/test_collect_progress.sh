#!/bin/sh
# test_collect_progress: what kcollect shows while it runs (issue 24). On a terminal (a pty from
# script(1)): one live status line (trajectories, problems solved, turns, tokens, cost, rate,
# ETA) and no per-turn lines unless -v; not on a terminal: a line per turn. With a price: an
# estimate of tokens and cost before the run starts; without one, none.
set -eu
. "$(dirname "$0")/lib.sh"
command -v script >/dev/null || { echo "SKIP: no script(1) to make a terminal"; exit 0; }
start_server --delay-ms 300
ARGS="--problems level1/019_relu,level1/023_softmax --endpoint $URL --model m --compile-only --turns 2 --samples 2 --concurrency 1"
tty_run() { # NAME ARGS...: kcollect on a pty, its screen in $T/NAME.tty
    name=$1; shift
    env -u KC_PLAIN_LOG script -qfec "'$KC_BIN/kcollect' $ARGS $*" /dev/null >"$T/$name.tty" 2>&1 \
        || fail "$name: $(tr '\r' '\n' <"$T/$name.tty" | tail -5)"
}
tty_run plain --db "$T/a.db" --price 3,15
tr '\r' '\n' <"$T/plain.tty" >"$T/plain.lines"
grep -q "trajectories [0-9]/4 · problems compiled [0-9]/2 · turns [0-9]* ([0-9]* cached) · [0-9]* tok, [0-9]* tok/s · \$[0-9.]*" \
    "$T/plain.lines" || fail "no status line on a terminal: $(head -20 "$T/plain.lines")"
grep -q "· ETA [0-9]*m[0-9][0-9]s" "$T/plain.lines" || fail "no ETA in the status line"
! grep -q " turn [0-9]*: " "$T/plain.lines" || fail "per-turn lines on a terminal without -v: $(grep ' turn ' "$T/plain.lines" | head -3)"
grep -q "estimate before starting: at most about [0-9]*k input and [0-9]*k output tokens, \$[0-9.]* at \$3/\$15 per Mtok" \
    "$T/plain.lines" || fail "no estimate with a price: $(head -5 "$T/plain.lines")"
est=$(grep -n "estimate before starting" "$T/plain.lines" | head -1 | cut -d: -f1)
new=$(grep -n "starting new run" "$T/plain.lines" | head -1 | cut -d: -f1)
[ "$est" -lt "$new" ] || fail "the estimate comes after the run starts"

tty_run verbose --db "$T/b.db" -v
tr '\r' '\n' <"$T/verbose.tty" | grep -q "level1/019_relu#0 turn 0: " || fail "-v: no per-turn lines on a terminal"
! tr '\r' '\n' <"$T/verbose.tty" | grep -q "estimate before starting" || fail "an estimate without a price"

"$KC_BIN/kcollect" $ARGS --db "$T/c.db" >"$T/o" 2>"$T/e" || fail "not on a terminal: $(cat "$T/e")"
grep -q "level1/019_relu#0 turn 0: " "$T/e" || fail "not on a terminal: no per-turn lines: $(cat "$T/e")"
! grep -q "trajectories [0-9]/4 · " "$T/e" || fail "a status line when not on a terminal"
echo ok

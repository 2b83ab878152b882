#!/bin/sh
# bench_paid_twice: measures the window in which a kill -9 makes kcollect buy an answer twice.
# kcollect runs against the fake LLM server (concurrency 16, answers of prose that need no
# compile, so turns follow each other as fast as the client and the database allow) and is
# killed with SIGKILL at random moments, KILLS times, then finishes. The server counts each
# request body it answered in full; an answer counted twice was bought twice (sent in full,
# not recorded before the kill). Prints: kills, answers served, answers bought twice.
# Measured on the build machine (2 cores, loaded; release builds; 30 kills, SAMPLES=10): the
# tree before issue 15 bought 156 of 2116 answers twice, after it 8 of 1968.
# KC_BIN: the build's bin; KILLS (default 30), SAMPLES (default 40).
set -eu
: "${KC_BIN:?}" "${KC_PROBLEMS:?}"
KILLS=${KILLS:-30}
SAMPLES=${SAMPLES:-40}
T=$(mktemp -d)
SERVER=
trap '[ -n "$SERVER" ] && kill $SERVER 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
printf '{"answers": [{"content": "An answer of prose: no code block, no compile."}]}\n' >"$T/script.json"
"$KC_BIN/fake_llm" --script "$T/script.json" --stats-file "$T/stats.json" >"$T/server.out" 2>&1 &
SERVER=$!
i=0
while ! grep -q 'listening on .*:[0-9][0-9]*$' "$T/server.out" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 100 ] || { echo "fake_llm did not start"; exit 1; }; sleep 0.05
done
URL="http://127.0.0.1:$(sed -n 's/.*:\([0-9]*\)$/\1/p' "$T/server.out")/v1"
run() { exec "$KC_BIN/kcollect" --problems 'level1/0[0-4]*' --endpoint "$URL" --model fake --db "$T/kc.db" \
        --samples "$SAMPLES" --turns 4 --concurrency 16 --compile-only "$@" >>"$T/log" 2>&1; }
seed=$$
for k in $(seq 1 "$KILLS"); do
    (run) &
    pid=$!
    seed=$(( (seed * 1103515245 + 12345) % 2147483648 ))
    sleep "$(awk -v s=$seed 'BEGIN { srand(s); printf "%.3f", 0.3 + rand() * 1.2 }')"
    kill -9 $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
done
(run) || { tail -5 "$T/log"; echo "the final run failed"; exit 1; }
stat() { sqlite3 :memory: "SELECT $1 FROM json_each(json_extract(readfile('$T/stats.json'), '\$.answered_bodies'))"; }
served=$(stat "sum(value)")
twice=$(stat "coalesce(sum(value - 1), 0)")
recorded=$(sqlite3 "$T/kc.db" "SELECT count(*) FROM responses WHERE from_cache = 0")
turns=$(sqlite3 "$T/kc.db" "SELECT count(*) FROM turns")
echo "paid twice: $KILLS kills, $served answers served, $recorded recorded, $turns turns, $twice bought twice"
[ $((recorded + twice)) = "$served" ] || { echo "served ($served) is not recorded ($recorded) + bought twice ($twice)"; exit 1; }

# lib.sh: what the CLI tests share (sourced): the environment check, a scratch directory $T
# removed at exit together with the fake LLM server if one still runs, fail, and starting and
# stopping the fake server.
: "${KC_BIN:?}" "${KC_ROOT:?}" "${KC_PROBLEMS:?}"
T=$(mktemp -d)
SERVER=
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export KC_PLAIN_LOG=1
# reference cubins go to the test's own cache, never the user's (verify/service/cubin_cache.h)
export KC_CUBIN_CACHE="$T/cubin-cache"

# start_server FAKE_LLM_OPTIONS...: the fake LLM server on a free loopback port, its request
# counts in $T/stats.json; sets SERVER (pid) and URL (its /v1 base).
start_server() {
    # a stale server.out would still name the last server's port: the new server's shell may
    # not have truncated it yet when the loop below first reads it (a flaky connection refused)
    rm -f "$T/server.out"
    "$KC_BIN/fake_llm" --stats-file "$T/stats.json" "$@" >"$T/server.out" 2>"$T/server.err" &
    SERVER=$!
    i=0
    while ! grep -q 'listening on .*:[0-9][0-9]*$' "$T/server.out" 2>/dev/null; do
        i=$((i + 1)); [ $i -lt 100 ] || fail "fake_llm did not start"; sleep 0.05
    done
    URL="http://127.0.0.1:$(sed -n 's/.*:\([0-9]*\)$/\1/p' "$T/server.out")/v1"
}
stop_server() { kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=; }

#!/bin/sh
# test_readme_examples: the kcollect, kcurate and kexport example commands users read, as written
# (taken from README.md, then docs/USAGE.md where the README has none, so an edited example is
# tested as edited), against the fake LLM server (issue 24). Only the problem selection, sample
# count and --compile-only (no GPU here) are appended. Also: --api anthropic without an endpoint
# means https://api.anthropic.com, and ANTHROPIC_BASE_URL overrides it (the README's Anthropic
# example was refused as written).
set -eu
. "$(dirname "$0")/lib.sh"
# example TOOL PATTERN: the first example line of TOOL matching PATTERN in the README, else in
# docs/USAGE.md (the README keeps one example per tool), continuation lines joined, the trailing
# comment and the [optional] parts dropped.
example() {
    awk '/\\$/ { sub(/\\$/, ""); line = line $0; next } { print line $0; line = "" }' \
        "$KC_ROOT/README.md" "$KC_ROOT/docs/USAGE.md" |
        grep "^    $1 " | grep -e "$2" | head -1 | sed 's/  *#.*$//; s/ \[--[^]]*\]//g; s/^ *//'
}
PATH="$KC_BIN:$PATH"
SMALL="--problems level1/019_relu --samples 1 --compile-only --turns 1"
cd "$T"
start_server --bug compile

# OpenAI-compatible server.
cmd=$(example kcollect "localhost:8000")
[ -n "$cmd" ] || fail "no OpenAI example in the README or docs/USAGE.md"
cmd=$(echo "$cmd" | sed "s|http://localhost:8000/v1|$URL|; s|MODEL|fake|")
(unset OPENAI_BASE_URL ANTHROPIC_BASE_URL; eval "$cmd $SMALL") >o1 2>e1 || fail "'$cmd' failed: $(cat e1)"

# Anthropic, exactly as written, with ANTHROPIC_BASE_URL pointing at the fake server.
cmd=$(example kcollect "--api anthropic")
[ -n "$cmd" ] || fail "no Anthropic example in the README or docs/USAGE.md"
(export ANTHROPIC_BASE_URL="${URL%/v1}" OPENAI_BASE_URL=http://127.0.0.1:9/v1; eval "$cmd $SMALL") >o2 2>e2 \
    || fail "'$cmd' failed: $(cat e2)"
[ "$(sqlite3 kc.db "SELECT api FROM requests ORDER BY id DESC LIMIT 1")" = anthropic ] || fail "not sent as anthropic"
# Without ANTHROPIC_BASE_URL: Anthropic's own API (printed by --dry-run; nothing is sent).
(unset OPENAI_BASE_URL ANTHROPIC_BASE_URL; eval "$cmd --dry-run") >o3 2>e3 || fail "dry run: $(cat e3)"
grep -q "^endpoint: https://api.anthropic.com$" o3 || fail "no default Anthropic URL: $(tail -1 o3)"
# An explicit --endpoint still wins.
eval "$cmd --endpoint $URL --dry-run" >o3 2>e3 || fail "dry run with --endpoint: $(cat e3)"
grep -q "^endpoint: $URL$" o3 || fail "--endpoint lost to the Anthropic default: $(tail -1 o3)"

# Compile-only on the bundled server.
cmd=$(example kcollect "--compile-only --db")
[ -n "$cmd" ] || fail "no compile-only example in the README or docs/USAGE.md"
(unset OPENAI_BASE_URL ANTHROPIC_BASE_URL; eval "$cmd $SMALL") >o4 2>e4 || fail "'$cmd' failed: $(cat e4)"

# Curate, stats, and every export format.
for pat in "kcurate run --db" "kcurate stats --db"; do
    cmd=$(example kcurate "$pat")
    eval "$cmd" >o5 2>e5 || fail "'$cmd' failed: $(cat e5)"
done
cmd=$(example kexport "--format sft|")
[ -n "$cmd" ] || fail "no kexport example in the README or docs/USAGE.md"
for f in sft multiturn rl preference; do
    c=$(echo "$cmd" | sed "s/sft|multiturn|rl|preference/$f/; s| --out ds| --out ds-$f|")
    if [ $f = preference ]; then # compile-only: no correct kernel to prefer; says so, exit 1
        rc=0
        eval "$c" >o6 2>e6 || rc=$?
        [ $rc -eq 1 ] && grep -q "no kernel is known correct" e6 || fail "'$c': rc $rc: $(cat e6)"
        continue
    fi
    eval "$c --verdict any" >o6 2>e6 || fail "'$c' failed: $(cat e6)"
done
echo ok

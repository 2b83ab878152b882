#!/bin/sh
# test_cli_voice: one command-line voice across the tools (issues 24 and 35): --version on every
# tool and --help on every subcommand (exit 0, on stdout, nothing on stderr); a usage error is one
# line "tool cmd: error: what; see 'tool cmd --help'" with exit 2 (kverify: 4, its documented
# usage status), never the whole usage; an unknown option says "unknown option", never "needs a
# value"; other errors say "tool: error:"; hints name the real database path, not FILE.
# (test_cli_language: each command's own help, values, --opt=value, files, the scripts.)
set -eu
. "$(dirname "$0")/lib.sh"
cd "$T"
VERSION=$(cat "$KC_ROOT/VERSION")
ok0() { # name command...: exit 0, stdout not empty, stderr empty
    name=$1; shift
    rc=0
    "$@" >"$name.out" 2>"$name.err" || rc=$?
    [ $rc -eq 0 ] || fail "$name: exit $rc: $(cat "$name.err")"
    [ -s "$name.out" ] || fail "$name: nothing on stdout"
    [ ! -s "$name.err" ] || fail "$name: stderr: $(cat "$name.err")"
}
usage_err() { # name status pattern command...: one line on stderr matching pattern, exit status
    name=$1 want=$2 pat=$3; shift 3
    rc=0
    "$@" >"$name.out" 2>"$name.err" || rc=$?
    [ $rc -eq "$want" ] || fail "$name: exit $rc, expected $want: $(cat "$name.err")"
    [ "$(wc -l <"$name.err")" -eq 1 ] || fail "$name: not one line: $(cat "$name.err")"
    grep -Eq -- "$pat" "$name.err" || fail "$name: '$(cat "$name.err")' does not match '$pat'"
    case $pat in
    *unknown*) ! grep -q "needs a value" "$name.err" || fail "$name: says 'needs a value'" ;;
    esac
}
for tool in kcollect kverify kcurate kexport; do
    ok0 "$tool-version" "$KC_BIN/$tool" --version
    [ "$(cat "$tool-version.out")" = "$tool $VERSION" ] || fail "$tool --version: $(cat "$tool-version.out")"
    ok0 "$tool-help" "$KC_BIN/$tool" --help
done
for sub in check compile problems import run reverify racecheck dump gpus serve; do
    ok0 "kverify-$sub-help" "$KC_BIN/kverify" $sub --help
done
for sub in run merge verify-db stats runs flips report; do
    ok0 "kcurate-$sub-help" "$KC_BIN/kcurate" $sub --help
done

# usage errors: one line, the tool's voice, exit 2 (kverify 4)
usage_err collect-wat 2 "^kcollect: error: unknown option '--wat'; see 'kcollect --help'$" \
    "$KC_BIN/kcollect" --problems level1/019_relu --wat
usage_err collect-none 2 "^kcollect: error: no problems selected.*; see 'kcollect --help'$" "$KC_BIN/kcollect"
usage_err collect-novalue 2 "^kcollect: error: --db needs a value; see" "$KC_BIN/kcollect" --problems x --db
usage_err curate-none 2 "^kcurate: error: no command .*; see 'kcurate --help'$" "$KC_BIN/kcurate"
usage_err curate-wat 2 "^kcurate run: error: unknown option '--wat'; see 'kcurate run --help'$" "$KC_BIN/kcurate" run --wat
usage_err curate-cmd 2 "^kcurate: error: unknown command 'wat'.*; see 'kcurate --help'$" "$KC_BIN/kcurate" wat
usage_err curate-report 2 "^kcurate report: error: unknown option '--wat'; see 'kcurate report --help'$" "$KC_BIN/kcurate" report --db x --wat y
usage_err export-wat 2 "^kexport: error: unknown option '--wat'; see 'kexport --help'$" "$KC_BIN/kexport" --db x --wat
usage_err export-wat2 2 "^kexport: error: unknown option '--wat'; see" "$KC_BIN/kexport" --wat x --db y --out z
usage_err export-novalue 2 "^kexport: error: --out needs a value; see" "$KC_BIN/kexport" --db x --out
usage_err export-none 2 "^kexport: error: kexport needs --db FILE and --out DIR; see" "$KC_BIN/kexport"
usage_err verify-cmd 4 "^kverify: error: unknown command 'wat'.*; see 'kverify --help'$" "$KC_BIN/kverify" wat
usage_err verify-none 4 "^kverify: error: no command" "$KC_BIN/kverify"
usage_err verify-wat 4 "^kverify check: error: unknown option '--wat'; see 'kverify check --help'$" "$KC_BIN/kverify" check --wat
usage_err verify-run-x 4 "^kverify run: error: unknown option '-x'; see 'kverify run --help'$" "$KC_BIN/kverify" run -x
usage_err verify-novalue 4 "^kverify compile: error: --problem needs a value; see 'kverify compile --help'$" "$KC_BIN/kverify" compile --problem

# other errors: "tool: error:", exit 1
rc=0
"$KC_BIN/kcurate" stats --db "$T/nosuch.db" >o 2>e || rc=$?
[ $rc -eq 1 ] || fail "kcurate stats on a missing file: exit $rc"
grep -q "^kcurate: error: " e || fail "kcurate error voice: $(cat e)"
rc=0
"$KC_BIN/kexport" --db "$T/nosuch.db" --out x >o 2>e || rc=$?
[ $rc -eq 1 ] || fail "kexport on a missing file: exit $rc"
grep -q "^kexport: error: " e || fail "kexport error voice: $(cat e)"

# hints show the real path, not FILE
"$KC_BIN/kcollect" --problems level1/019_relu --compile-only --turns 1 --db "$T/h.db" >o 2>e || fail "kcollect: $(cat e)"
"$KC_BIN/kcurate" stats --db "$T/h.db" >o 2>e || fail "kcurate stats: $(cat e)"
grep -qF "kcurate run --db $T/h.db" o || fail "the stats hint does not name the database: $(cat o)"

# one name for one thing: -o/--out everywhere, kcollect's --price IN,OUT in kcurate report too
"$KC_BIN/kcurate" run --db "$T/h.db" >/dev/null || fail "kcurate run"
"$KC_BIN/kexport" --db "$T/h.db" -o "$T/ex" --verdict any >o 2>e || fail "kexport -o: $(cat e)"
[ -f "$T/ex/manifest.json" ] || fail "kexport -o wrote no manifest"
"$KC_BIN/kcurate" merge "$T/h.db" --out "$T/m.db" >o 2>e || fail "kcurate merge --out: $(cat e)"
"$KC_BIN/kcurate" report --db "$T/h.db" --out "$T/rep" --price 3,15 >o 2>e || fail "kcurate report --price: $(cat e)"
usage_err report-price 2 "^kcurate report: error: --price takes IN,OUT" "$KC_BIN/kcurate" report --db "$T/h.db" --out "$T/rep" --price 3
echo ok

#!/bin/sh
# reference_ab.sh: checks rewritten references against the ones they replace, on a GPU.
# For each problem: the previous reference (as loaded from the problems directory of git
# revision REV, shared kernel files expanded; or the self-contained OLD_DIR/<name>.cu) runs as a
# candidate against the current one (5 seeds on the default dims plus every alt
# set), then the current reference is timed. Prints one line per problem:
#   <problem> <verdict of old-vs-new> max_abs=... new_ms=... old_ms=...
# Usage: tools/device/reference_ab.sh (--rev REV | --old-dir DIR) PROBLEM_NAME...
#   (KC_BIN: the binaries, KC_PROBLEMS: the problems directory)
set -u
KC_BIN="${KC_BIN:-bin}"; KC_PROBLEMS="${KC_PROBLEMS:-problems}"
rev=""; old_dir=""
case "${1:-}" in
--rev) rev="$2"; shift 2;;
--old-dir) old_dir="$2"; shift 2;;
*) echo "usage: $0 (--rev REV | --old-dir DIR) PROBLEM_NAME..." >&2; exit 2;;
esac
tmp="${TMPDIR:-/tmp}/kc-ab.$$"; mkdir -p "$tmp"
[ -n "$rev" ] && { git archive "$rev" problems | tar -x -C "$tmp" || exit 2; }
field() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); t=d.get("timing") or {}
print(d["verdict"], "flags=" + (d.get("flags") or "-"), "max_abs=%s" % d.get("max_abs_err", "-"),
      "median_ms=%s" % t.get("median_ms", "-"))' "$1"; }
fails=0
for name in "$@"; do
    old="$tmp/$name.cu"
    if [ -n "$rev" ]; then
        KC_PROBLEMS="$tmp/problems" "$KC_BIN/kverify" problems --show-reference "level1/$name" > "$old" || continue
    else
        cp "$old_dir/$name.cu" "$old" || continue
    fi
    "$KC_BIN/kverify" problems --show-reference "level1/$name" > "$tmp/new.cu" || continue
    "$KC_BIN/kverify" check --problem "level1/$name" "$old" --json --no-timing > "$tmp/ab.json" 2>"$tmp/ab.err"
    ab=$(field "$tmp/ab.json" 2>/dev/null || echo "error: $(head -c 300 "$tmp/ab.err")")
    "$KC_BIN/kverify" check --problem "level1/$name" "$tmp/new.cu" --json --n-seeds 1 > "$tmp/new.json" 2>"$tmp/new.err"
    new=$(field "$tmp/new.json" 2>/dev/null || echo "error: $(head -c 300 "$tmp/new.err")")
    echo "$name | old as candidate: $ab | new timed: $new"
    case "$ab" in correct*) ;; *) fails=$((fails + 1));; esac
done
rm -rf "$tmp"
echo "reference_ab: $# problems, $fails where the previous reference does not match the current one"
[ "$fails" -eq 0 ]

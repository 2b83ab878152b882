#!/bin/sh
# test_datasheet_formats: DATASHEET.md names as many record formats as kexport has (issue 24: it
# said four when there were five), and describes each one kexport --help lists.
set -eu
. "$(dirname "$0")/lib.sh"
formats=$("$KC_BIN/kexport" --help | sed -n 's/^ *--format F *\([a-z| ]*\).*/\1/p' | tr -d '|')
[ -n "$formats" ] || fail "kexport --help lists no formats"
n=$(echo $formats | wc -w)
words="zero one two three four five six seven eight nine"
word=$(echo $words | cut -d' ' -f$((n + 1)))
grep -q "Records come in $word" "$KC_ROOT/DATASHEET.md" || fail "DATASHEET does not say $word formats ($formats)"
for f in $formats; do
    grep -q "^  - \`$f\`:" "$KC_ROOT/DATASHEET.md" || fail "DATASHEET does not describe the $f format"
done
echo ok

#!/bin/sh
# test_export_degenerate: problems whose manifest is marked "degenerate" (output trivial at their
# inits, as level 2's 080 and 083) stay out of the sft, multiturn, rl and preference exports by
# default (kernelbench modules come from the same per-problem query as sft), the empty-export
# explanation says so and names the flag, and --include-degenerate brings them back (recorded in
# the manifest's config). The mark is read from the manifest blob the database holds.
set -eu
. "$(dirname "$0")/lib.sh"

"$KC_BIN/kc_synth" --db "$T/a.db" --candidates 300 --problems 6 --seed 5
deg=$(sqlite3 "$T/a.db" "SELECT id FROM problems ORDER BY id LIMIT 1 OFFSET 2")
[ -n "$deg" ] || fail "kc_synth made fewer than 3 problems"
# Mark one problem degenerate: a new manifest blob (the old one with "degenerate" added).
sqlite3 "$T/a.db" "SELECT json_set(CAST(b.data AS TEXT), '\$.degenerate', 'identically zero')
    FROM blobs b JOIN problems p ON p.manifest_sha = b.sha256 WHERE p.id = '$deg'" | tr -d '\n' >"$T/m.json"
grep -q '"degenerate":"identically zero"' "$T/m.json" || fail "could not build the marked manifest"
sha=$(sha256sum "$T/m.json" | cut -d' ' -f1)
sqlite3 "$T/a.db" "INSERT INTO blobs(sha256, size, data) VALUES ('$sha', $(wc -c <"$T/m.json"), readfile('$T/m.json'));
                   UPDATE problems SET manifest_sha = '$sha' WHERE id = '$deg';"
"$KC_BIN/kcurate" run --db "$T/a.db" >/dev/null
n_deg=$(sqlite3 "$T/a.db" "SELECT count(*) FROM candidates WHERE problem_id = '$deg'")
[ "$n_deg" -gt 0 ] || fail "the marked problem has no candidates"

ids() { zcat "$1"/*.jsonl.gz | grep -o '"problem_id":"[^"]*"\|"problem":{"id":"[^"]*"' | sed 's/.*"\([^"]*\)"$/\1/' | sort -u; }
all="--split train,valid,test,heldout --dedup none"
for fmt in sft multiturn rl preference; do
    extra=""; [ "$fmt" = sft ] && extra="--every-turn"
    "$KC_BIN/kexport" --db "$T/a.db" --out "$T/$fmt" --format $fmt $all $extra >/dev/null 2>"$T/$fmt.err" ||
        fail "$fmt: $(cat "$T/$fmt.err")"
    ids "$T/$fmt" >"$T/$fmt.ids"
    [ -s "$T/$fmt.ids" ] || fail "$fmt: exported nothing"
    ! grep -qx "$deg" "$T/$fmt.ids" || fail "$fmt: the degenerate problem $deg was exported by default"
    "$KC_BIN/kexport" --db "$T/a.db" --out "$T/$fmt-inc" --format $fmt $all $extra --include-degenerate \
        >/dev/null 2>"$T/$fmt-inc.err" || fail "$fmt --include-degenerate: $(cat "$T/$fmt-inc.err")"
    ids "$T/$fmt-inc" >"$T/$fmt-inc.ids"
    grep -qx "$deg" "$T/$fmt-inc.ids" || fail "$fmt --include-degenerate: $deg missing"
    # nothing else changes: the included set is the default set plus the degenerate problem
    { cat "$T/$fmt.ids"; echo "$deg"; } | sort -u | cmp -s - "$T/$fmt-inc.ids" ||
        fail "$fmt: --include-degenerate changed more than the degenerate problem"
    grep -q '"include_degenerate": *true' "$T/$fmt-inc/manifest.json" ||
        fail "$fmt: the manifest does not record --include-degenerate"
    ! grep -q 'include_degenerate' "$T/$fmt/manifest.json" || fail "$fmt: default manifest changed"
done

# an export of only the degenerate problem's level/split is empty and says why
lvl=$(sqlite3 "$T/a.db" "SELECT level FROM problems WHERE id = '$deg'")
sqlite3 "$T/a.db" "UPDATE problem_labels SET split = 'heldout' WHERE problem_id = '$deg'"
"$KC_BIN/kexport" --db "$T/a.db" --out "$T/only" --format sft --split heldout --level "$lvl" \
    >/dev/null 2>"$T/only.err" && fail "an empty export exited 0"
grep -q "problems marked degenerate (output trivial at their inits), left out: 1" "$T/only.err" ||
    fail "the empty export does not say the degenerate problem was left out: $(cat "$T/only.err")"
grep -q -- "try: --include-degenerate" "$T/only.err" || fail "no --include-degenerate hint"
echo "test_export_degenerate: ok"

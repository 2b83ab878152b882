#!/bin/sh
# test_export_card: each export directory gets a Hugging Face dataset card (README.md): YAML front
# matter with pretty_name, license, task_categories, size_categories, tags and configs whose
# data_files globs match exactly the shards written for each split (what datasets.load_dataset
# needs to find the splits), then the loading notes (Parquet conversion for verl) and the
# export's datasheet with its caveats. The YAML is checked with a minimal parser here (awk): the
# keys present, one data_files entry per split, each glob matching that split's shards.
set -eu
. "$(dirname "$0")/lib.sh"

"$KC_BIN/kc_synth" --db "$T/a.db" --candidates 400 --problems 20 --seed 4
"$KC_BIN/kcurate" run --db "$T/a.db" --heldout 'level1/000_synth_op' >/dev/null

# front matter: the lines between the first two '---' lines
front() { awk 'NR == 1 && $0 != "---" { exit 1 } NR > 1 && $0 == "---" { exit } NR > 1' "$1"; }

check_card() { # DIR FORMAT
    d=$1
    [ -f "$d/README.md" ] || fail "$2: no README.md"
    front "$d/README.md" >"$T/front" || fail "$2: README.md does not open with YAML front matter"
    for k in pretty_name license task_categories size_categories tags configs; do
        grep -q "^$k:" "$T/front" || fail "$2: no top-level '$k' in the card's YAML"
    done
    grep -q "^pretty_name: kcorpus $2 export$" "$T/front" || fail "$2: pretty_name"
    grep -q '^- text-generation$' "$T/front" || fail "$2: task_categories"
    grep -Eq '^- (n<1K|1K<n<10K)$' "$T/front" || fail "$2: size_categories"
    grep -q '^- config_name: default$' "$T/front" || fail "$2: configs without a default config"
    # data_files: "  - split: S" followed by "    path: "GLOB""
    awk '/^  - split: / { s = $3; next } /^    path: / { gsub(/"/, "", $2); print s, $2 }' \
        "$T/front" >"$T/files"
    [ -s "$T/files" ] || fail "$2: no data_files"
    # the splits of the card are the splits of the shards
    ls "$d" | sed -n 's/^\([a-z]*\)-[0-9]\{5\}-of-[0-9]\{5\}\.jsonl.*/\1/p' | sort -u >"$T/splits.shards"
    cut -d' ' -f1 "$T/files" | sort >"$T/splits.card"
    cmp -s "$T/splits.shards" "$T/splits.card" ||
        fail "$2: card splits $(cat "$T/splits.card") vs shard splits $(cat "$T/splits.shards")"
    # each glob matches exactly its split's shards, and every shard is matched once
    : >"$T/matched"
    while read -r split glob; do
        (cd "$d" && for f in $glob; do [ -f "$f" ] || fail "$2: glob $glob matches nothing"; echo "$f"; done) >"$T/m1"
        grep -v "^$split-" "$T/m1" && fail "$2: glob $glob matches another split's shard"
        cat "$T/m1" >>"$T/matched"
    done <"$T/files"
    ls "$d" | grep -E '^[a-z]+-[0-9]{5}-of-[0-9]{5}\.jsonl' | sort >"$T/all"
    sort "$T/matched" | cmp -s - "$T/all" || fail "$2: globs do not cover the shards exactly"
    # the datasheet follows, with the caveats true of this export (issue 35, item 3): kc_synth's
    # run is a model's (not synthetic), a compiled caveat only where compiled records are
    tail -n "$(wc -l <"$d/DATASHEET.md")" "$d/README.md" | cmp -s - "$d/DATASHEET.md" ||
        fail "$2: README.md does not end with the export's datasheet"
    ! grep -q 'bundled-fake-llm' "$d/README.md" || fail "$2: a synthetic-data caveat for no synthetic record"
    compiled=$(sqlite3 :memory: "SELECT json_extract(readfile('$d/manifest.json'), '\$.counts.by_verdict_class.compiled') IS NOT NULL")
    if [ "$compiled" = 1 ]; then
        grep -q '`compiled`.*not known to be correct' "$d/README.md" || fail "$2: compiled caveat missing"
    else
        ! grep -q '`compiled`.*not known to be correct' "$d/README.md" || fail "$2: compiled caveat without compiled records"
    fi
    grep -q '^## Caveats$' "$d/README.md" || fail "$2: no caveats section"
    grep -q "to_parquet('train.parquet')" "$d/README.md" || fail "$2: Parquet conversion missing"
}

for f in sft multiturn rl preference; do
    "$KC_BIN/kexport" --db "$T/a.db" --out "$T/$f" --format "$f" --shard-mb 0.05 \
        --split train,valid,test,heldout >/dev/null
    check_card "$T/$f" "$f"
done
grep -q 'path: "train-\*.jsonl.gz"' "$T/sft/README.md" || fail "gzip glob"
"$KC_BIN/kexport" --db "$T/a.db" --out "$T/plain" --format sft --no-gzip --tar >/dev/null
check_card "$T/plain" sft
grep -q 'path: "train-\*.jsonl"$' "$T/plain/README.md" || fail "plain shards: glob should end in .jsonl"
tar -tf "$T/plain.tar" | grep -qx README.md || fail "the tar has no README.md"
grep -q 'verl' "$T/rl/README.md" || fail "rl card: no verl note"
echo "ok: dataset cards with YAML front matter matching the shards"

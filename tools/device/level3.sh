#!/bin/sh
# level3.sh: issue 38's GPU work on one H100 (carry .devbuild and .devlibs), one part per step so
# that a call of at most 600 s runs the parts it names, in order: PARTS="bench cross eager" say.
#   bench   the 50 references as candidates (make bench's level3 part): rate, verdicts, phases;
#           the database comes back gzipped (tp3.db.gz) for per-problem, per-family reading
#   cross   tools/baselines/crosscheck.py at the drawn dims (hidden0, boundary and stratified
#           sets; CROSS_ONLY narrows it, CROSS_S bounds it): report cross3.json, resumable by --only
#   eager   tools/baselines/baselines.py --eager for the networks still missing (EAGER_S budget)
#   warm    torch.compile caches filled by WARM_PROCS processes at once (nothing timed), caches
#           under .torchcache in the tree, which a warm machine keeps for the next call
#   compile baselines.py --compile, serially, with the warm caches (COMPILE_S budget)
#   demo    make demo with DEMO_PROBLEMS=level3 on the GPU, each step's seconds
#   split   the split convolutions (gen_level3.py --conv-split) and the tensor-core ones against
#           the committed references (tests/gpu/test_conv_split.sh) and kverify dump --profile
#           (tests/gpu/test_profile.sh), then the timed A/B for SPLIT_IDS (default DenseNet-201,
#           AlexNet, ResNet-101): the reference, its split and its tensor-core versions as timed
#           candidates (median ms at the default dims): split.txt, split_ab.txt
#   profile the reference's device time by kernel at the default dims (kverify dump --profile 3)
#           for PROFILE_IDS (default the six costliest networks): profile3.json, one object
# The baselines file (problems/level3/baselines/*.json) comes back in $OUT after eager/compile.
# A part written with a trailing "+" ("warm+") runs in the background beside the next ones (warm
# compiles on the CPU while cross runs; nothing timed runs beside it); the call waits for it.
. tools/device/common.sh
export TORCHINDUCTOR_CACHE_DIR="$R/.torchcache/inductor" TRITON_CACHE_DIR="$R/.torchcache/triton"
note "start ${PARTS:-bench}: $(nvidia-smi -L | tr '\n' ' ')"
BASE="problems/level3/baselines"
run_part() {
    p=$1 t0=$(date +%s)
    case $p in
    bench)
        KC_BIN="$B" KC_BENCH_PARTS=level3 OUT=/tmp/b3 timeout "${BENCH_S:-240}" sh tests/bench/bench_verify.sh \
            > "$OUT/bench3.txt" 2>&1
        gzip -c /tmp/b3/bench/throughput_level3.db > "$OUT/tp3.db.gz" 2>/dev/null
        grep -E "references as candidates|verdicts|slowest" "$OUT/bench3.txt" >> "$S" ;;
    cross)
        timeout "${CROSS_S:-200}" python3 tools/baselines/crosscheck.py --bin "$B" --suite level3 \
            --dims hidden0,bound,strat --seeds 11 --only "${CROSS_ONLY:-}" --out /dev/shm/kc3 \
            --report "$OUT/cross3.json" > "$OUT/cross3.txt" 2>&1
        echo "cross rc=$?: $(grep -c ' ok$' "$OUT/cross3.txt") ok, $(grep -c DISAGREES "$OUT/cross3.txt") disagree" >> "$S" ;;
    eager)
        timeout "${EAGER_S:-150}" python3 tools/baselines/baselines.py --suite level3 --eager \
            --budget-s "$(( ${EAGER_S:-150} - 20 ))" > "$OUT/eager3.txt" 2>&1
        echo "eager rc=$?: $(tail -1 "$OUT/eager3.txt")" >> "$S"
        cp $BASE/*.json "$OUT/" ;;
    warm)
        mkdir -p .torchcache
        python3 tools/baselines/baselines.py --suite level3 --dry-run 2>/dev/null | sed -n 's/^\(level3\/[0-9]*_[a-z0-9_]*\).*/\1/p' \
            | sed 's/level3\///' > /tmp/l3ids
        n=${WARM_PROCS:-6}; i=0
        while [ $i -lt "$n" ]; do
            ids=$(awk -v n="$n" -v i=$i 'NR % n == i' /tmp/l3ids | tr '\n' ',' | sed 's/,$//')
            [ -n "$ids" ] && timeout "${WARM_S:-500}" python3 tools/baselines/baselines.py --suite level3 --compile \
                --warm-only --only "$ids" > "$OUT/warm3_$i.txt" 2>&1 &
            i=$((i + 1))
        done
        wait
        echo "warm: $(cat "$OUT"/warm3_*.txt | grep -ci error) error lines; cache $(du -sh .torchcache | cut -f1)" >> "$S"
        cat "$OUT"/warm3_*.txt > "$OUT/warm3.txt"; rm -f "$OUT"/warm3_*.txt ;;
    compile)
        timeout "${COMPILE_S:-450}" python3 tools/baselines/baselines.py --suite level3 --compile \
            --budget-s "$(( ${COMPILE_S:-450} - 30 ))" \
            --note "compile caches warmed first by parallel --warm-only processes: compile_build_s is the build time with warm caches" \
            > "$OUT/compile3.txt" 2>&1
        echo "compile rc=$?: $(tail -1 "$OUT/compile3.txt")" >> "$S"
        cp $BASE/*.json "$OUT/" ;;
    split)
        for t in test_conv_split test_profile; do
            KC_BIN="$B" OUT=/tmp/split timeout "${SPLIT_S:-240}" sh tests/gpu/$t.sh >> "$OUT/split.txt" 2>&1
            echo "$t rc=$?: $(tail -1 "$OUT/split.txt")" >> "$S"
        done
        mkdir -p /tmp/sp/level3
        ln -sfn "$R/problems/shared" /tmp/sp/shared
        python3 tools/problems/gen_level3.py --conv-split --out /tmp/sp/level3 >/dev/null
        for id in ${SPLIT_IDS:-016_densenet201 005_alexnet 010_resnet101}; do
            "$B/kverify" problems --show-reference "level3/$id" > "/tmp/$id.cu"
            KC_PROBLEMS=/tmp/sp "$B/kverify" problems --show-reference "level3/$id" > "/tmp/${id}_split.cu"
            python3 tools/problems/unsplit_convs.py "/tmp/$id.cu" "/tmp/${id}_gemm.cu" --gemm >/dev/null
            for v in "" _split _gemm; do
                timeout 150 "$B/kverify" check --problem "level3/$id" "/tmp/$id$v.cu" --json --sanitizer none \
                    > "/tmp/ab$v.json" 2>/dev/null
                python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); t = d.get("timing") or {}
print("%-28s %-9s %-9s median %s ms" % (sys.argv[2], sys.argv[3] or "reference", d["verdict"], t.get("median_ms")))' \
                    "/tmp/ab$v.json" "$id" "${v#_}" >> "$OUT/split_ab.txt" 2>&1
            done
        done
        cat "$OUT/split_ab.txt" >> "$S" ;;
    profile)
        for id in ${PROFILE_IDS:-016_densenet201 015_densenet121 005_alexnet 010_resnet101 024_efficientnet_b2 012_vgg19}; do
            timeout 120 "$B/kverify" dump --problem "level3/$id" --seed 11 --dims default --out "/tmp/prof/$id" \
                --profile 3 >> "$OUT/profile3.txt" 2>&1 || echo "profile $id failed" >> "$S"
        done
        python3 -c 'import json, glob, os, sys
print(json.dumps({os.path.basename(os.path.dirname(m)): json.load(open(m)).get("profile")
                  for m in sorted(glob.glob("/tmp/prof/*/meta.json"))}, indent=1))' > "$OUT/profile3.json"
        grep -A3 "reference:" "$OUT/profile3.txt" >> "$S" ;;
    demo)
        rm -rf /tmp/demo_level3
        DEMO_PROBLEMS=level3 DEMO_OUT=/tmp/demo_level3 timeout "${DEMO_S:-300}" sh tools/demo.sh .devbuild \
            > "$OUT/demo3.txt" 2>&1
        echo "demo level3 rc=$?: $(grep 'demo: seconds' "$OUT/demo3.txt")" >> "$S" ;;
    esac
    note "$p took $(( $(date +%s) - t0 )) s"
}
for p in ${PARTS:-bench}; do
    case $p in
    *+) run_part "${p%+}" & ;;
    *) run_part "$p" ;;
    esac
done
wait
cat "$S"

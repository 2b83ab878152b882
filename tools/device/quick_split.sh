#!/bin/sh
# quick_split.sh: the shortest GPU check of level 3's split convolutions (gen_level3.py
# --conv-split) and tensor-core ones (unsplit_convs.py --gemm), for a call with little device
# time: each as a candidate against the committed reference, untimed (DenseNet-201, ResNet-101,
# AlexNet's tensor cores), then DenseNet-201's reference, split and tensor-core versions timed at
# the default dims. Each line lands in $OUT/summary.txt as it ends.
. tools/device/common.sh
note "start: $(nvidia-smi -L | tr '\n' ' ')"
mkdir -p /tmp/sp/level3
ln -sfn "$R/problems/shared" /tmp/sp/shared
python3 tools/problems/gen_level3.py --conv-split --only 5,10,16 --out /tmp/sp/level3 >/dev/null
ab() { # id variant timing(0/1)
    id=$1 v=$2 flags="--no-timing"
    [ "$3" = 1 ] && flags=""
    [ -f "/tmp/$id.cu" ] || "$B/kverify" problems --show-reference "level3/$id" > "/tmp/$id.cu"
    case $v in
    reference) cp "/tmp/$id.cu" "/tmp/$id-$v.cu" ;;
    split) KC_PROBLEMS=/tmp/sp "$B/kverify" problems --show-reference "level3/$id" > "/tmp/$id-$v.cu" ;;
    gemm) python3 tools/problems/unsplit_convs.py "/tmp/$id.cu" "/tmp/$id-$v.cu" --gemm >/dev/null ;;
    esac
    t0=$(date +%s.%N)
    timeout 120 "$B/kverify" check --problem "level3/$id" "/tmp/$id-$v.cu" --json --sanitizer none $flags \
        > "/tmp/ab.json" 2>"/tmp/ab.err"
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); t = d.get("timing") or {}
print("%-18s %-9s timed=%s %-13s median_ms=%s  %s" % (sys.argv[2], sys.argv[3], sys.argv[4], d["verdict"],
      t.get("median_ms"), d["message"][:300].replace("\n", " ")))' /tmp/ab.json "$id" "$v" "$3" >> "$S" 2>&1 ||
        echo "$id $v: no result: $(tail -c 400 /tmp/ab.err)" >> "$S"
    echo "  ($(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s)" >> "$S"
}
ab 016_densenet201 split 0
ab 016_densenet201 gemm 0
ab 005_alexnet gemm 0
ab 016_densenet201 reference 1
ab 016_densenet201 split 1
ab 016_densenet201 gemm 1
ab 010_resnet101 split 0
ab 010_resnet101 gemm 0
cat "$S"

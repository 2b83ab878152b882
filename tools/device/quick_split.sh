#!/bin/sh
# quick_split.sh: the shortest GPU check of level 3's split convolutions (for a call with little
# device time): DenseNet-201's reference against its convolutions unsplit (conv2d_ref) and on
# the tensor cores (conv2d_gemm_ref), untimed, then the three timed at the default dims;
# AlexNet's tensor-core convolutions, untimed. Each line lands in $OUT/summary.txt as it ends.
. tools/device/common.sh
note "start: $(nvidia-smi -L | tr '\n' ' ')"
ab() { # id variant timing(0/1)
    id=$1 v=$2 flags="--no-timing"
    [ "$3" = 1 ] && flags=""
    [ -f "/tmp/$id.cu" ] || "$B/kverify" problems --show-reference "level3/$id" > "/tmp/$id.cu"
    case $v in
    reference) cp "/tmp/$id.cu" "/tmp/$id-$v.cu" ;;
    unsplit) python3 tools/problems/unsplit_convs.py "/tmp/$id.cu" "/tmp/$id-$v.cu" >/dev/null ;;
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
ab 016_densenet201 unsplit 0
ab 016_densenet201 gemm 0
ab 005_alexnet gemm 0
ab 016_densenet201 reference 1
ab 016_densenet201 unsplit 1
ab 016_densenet201 gemm 1
ab 010_resnet101 unsplit 0
ab 010_resnet101 gemm 0
cat "$S"

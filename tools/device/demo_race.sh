#!/bin/sh
# demo_race.sh: make demo's cost on one H100 (issue 37: level 1 within 30 s), for a call on
# nvidia-h100-x1 carrying .devbuild and .devlibs: tools/demo.sh on level 1 with its per-step
# seconds (race checks 4 side by side), then the race check alone at 1, 4 and 8 side by side on
# copies of the demo's database with its race checks removed (16 candidates each).
. tools/device/common.sh
note "start: $(nvidia-smi -L | tr '\n' ' ')"
rm -rf /tmp/demo_l1
t0=$(date +%s)
DEMO_OUT=/tmp/demo_l1 timeout 150 sh tools/demo.sh .devbuild > "$OUT/demo_level1.txt" 2>&1
echo "demo level1 rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
grep "demo: seconds" "$OUT/demo_level1.txt" >> "$S"
for n in 1 4 8; do
    cp /tmp/demo_l1/kc.db /tmp/race_$n.db
    python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM race_checks"); c.commit()' /tmp/race_$n.db
    t0=$(date +%s.%N)
    timeout 40 "$B/kverify" racecheck --db /tmp/race_$n.db --per-gpu $n --limit 16 > /tmp/race_$n.txt 2>&1
    rc=$?
    echo "racecheck --per-gpu $n --limit 16: rc=$rc $(python3 -c "import sys; print('%.1f s' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)"); $(tail -1 /tmp/race_$n.txt)" >> "$S"
done
note done
cat "$S"

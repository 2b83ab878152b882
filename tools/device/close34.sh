#!/bin/sh
# close34.sh: what issue 34 still needs measured on the final binary, on one H100 alone, in two
# calls of at most 600 s (PART=1, then PART=2): the attack catalogue at REPEAT=20 with the
# attention suite old/new twice each, each reference five times (50 candidates: the 10-candidate
# suite is mostly start-up) (part 1); level 1 and level 2 old/new/new/old (part 2;
# old: the pre-integrity-IV tree built in .devbuild/base). Carry .devbuild and .devlibs.
# CAT_REPEAT: the catalogue's verifications per entry (20).
. tools/device/common.sh
note "start part ${PART:-1}: $(nvidia-smi -L | tr '\n' ' ')"
if [ "${PART:-1}" = 1 ]; then
    KC_BIN=$B REPEAT=${CAT_REPEAT:-20} OUT=/tmp/i4 timeout 380 sh tests/gpu/test_integrity4.sh > "$OUT/integrity4.txt" 2>&1
    note "catalogue rc $?"
    tail -4 "$OUT/integrity4.txt" >> "$S"
    COST_SUITES=attention COST_COPIES=5 COST_ORDER="old new old new" sh tools/device/cost_ab.sh > /dev/null 2>&1
else
    COST_SUITES="level1 level2" COST_ORDER="old new new old" sh tools/device/cost_ab.sh > /dev/null 2>&1
fi
note done
cat "$S"

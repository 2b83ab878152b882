#!/bin/sh
# bench_verify: the verifier's figures. On any machine: sandboxed NVRTC compile
# time p50/p90 over every level-1 reference. On a GPU machine also: verified
# candidates per second for a batch of level-1 candidates at default shapes
# (the reference kernel of every level-1 problem: 100 candidates), the same for
# level 2 (its 100 references: fused chains, each verification runs the
# reference's chain beside the candidate's) and the attention suite (its 10 references at
# B16 H16 S2048 D128), printed side by side, GPU busy
# fraction (worker time and nvidia-smi utilisation), and the relative spread of
# the median time of one kernel over 10 independent verifications (default options; overall and at
# the most common SM clock, tests/bench/spread.py); after each
# batch, where the time went, per phase (tests/bench/phases.py: worker load, buffers, input
# setup, poison/reload/L2, candidate, CUPTI, guards and input sums, reference, compare, extra
# timed reps, sanitizer, IPC, compile wait). With several GPUs also: the level-1 batch (each
# reference twice, KC_BENCH_COPIES) on one GPU and on all, and the scaling factor.
OUT_DIR="${OUT:-${TMPDIR:-/tmp}}/bench"
mkdir -p "$OUT_DIR"
pct() { python3 -c 'import sys,statistics as s; v=sorted(float(x) for x in sys.stdin.read().split()); q=lambda p: v[min(len(v)-1,int(p*(len(v)-1)+0.5))]; print("n=%d p50=%.1f p90=%.1f" % (len(v), q(0.5), q(0.9)))'; }
sql() { python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); [print("|".join(str(v) for v in r)) for r in c.execute(sys.argv[2])]' "$@"; }

# KC_BENCH_PARTS: which parts run (default all: compile throughput scaling spread; level3 on request).
part() { case " ${KC_BENCH_PARTS:-compile throughput scaling spread} " in *" $1 "*) return 0 ;; esac; return 1; }

# The references as the verifier uses them (shared kernel files expanded), as candidates.
refs="$OUT_DIR/references"; rm -rf "$refs"; mkdir -p "$refs"
for m in "$KC_PROBLEMS"/level1/*.json; do
    id="level1/$(basename "$m" .json)"
    "$KC_BIN/kverify" problems --show-reference "$id" > "$refs/$(basename "$m" .json).cu" || exit 1
done
if part compile; then
    db="$OUT_DIR/compile.db"; rm -f "$db"*
    for m in "$KC_PROBLEMS"/level1/*.json; do
        "$KC_BIN/kverify" import --db "$db" --problem "level1/$(basename "$m" .json)" "$refs/$(basename "$m" .json).cu" >/dev/null
    done
    "$KC_BIN/kverify" run --db "$db" --compile-only > "$OUT_DIR/compile.log" 2>&1
    echo "compile (sandboxed NVRTC, sm_90, warm servers, $(nproc) CPUs, parallel servers): ms $(sql "$db" "SELECT duration_ms FROM compiles" | pct)"
    rm -f "$db"*
    for m in "$KC_PROBLEMS"/level1/*.json; do
        "$KC_BIN/kverify" import --db "$db" --problem "level1/$(basename "$m" .json)" "$refs/$(basename "$m" .json).cu" >/dev/null
    done
    "$KC_BIN/kverify" run --db "$db" --compile-only --threads 1 > "$OUT_DIR/compile1.log" 2>&1
    echo "compile (one server, one at a time): ms $(sql "$db" "SELECT duration_ms FROM compiles" | pct)"
    # Side by side: NVRTC alone in a bare process (no sandbox, no IPC), the same 100 sources once
    # each, then each once more. With a GPU driver present NVRTC keeps results in its on-disk
    # ComputeCache ($HOME/.nv); a fresh HOME makes every first compile a miss (a new candidate)
    # and every repeat a hit. The sandboxed servers never see that cache.
    floor_home=$(mktemp -d)
    HOME="$floor_home" "$KC_BIN/kc_nvrtc_floor" --repeat 1 "$refs"/*.cu > "$OUT_DIR/nvrtc_floor.log" 2>&1
    rm -rf "$floor_home"
    grep '^nvrtc-floor' "$OUT_DIR/nvrtc_floor.log" | sed 's/^nvrtc-floor /compile, NVRTC alone in a bare process, /' 
    printf 'extern "C" __global__ void relu(const float *x, float *y, long long n)\n{\n    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n    if (i < n)\n        y[i] = fmaxf(x[i], 0.0f);\n}\n// @launch relu<<<cdiv(B*D, 256), 256>>>(x, y, B*D);\n' > "$OUT_DIR/small.cu"
    rm -f "$db"*
    for i in $(seq 20); do "$KC_BIN/kverify" import --db "$db" --problem level1/019_relu "$OUT_DIR/small.cu" >/dev/null; done
    "$KC_BIN/kverify" run --db "$db" --compile-only --threads 1 > "$OUT_DIR/compile2.log" 2>&1
    echo "compile of a small one-kernel candidate (one server, one at a time): ms $(sql "$db" "SELECT duration_ms FROM compiles" | pct)"
fi

if ! "$KC_BIN/kverify" gpus >/dev/null 2>&1; then
    echo "SKIP: no GPU: throughput, busy fraction and timing spread not measured"
    exit 0
fi
# throughput SUITE: every reference of SUITE as a candidate, verified at default shapes; the
# rate (candidates/s) goes to $OUT_DIR/rate_SUITE. KC_BENCH_TP_COPIES=K (default 1) imports each
# reference K times as distinct sources (a "// copy c" line), so that a small suite (attention's
# 10) is not mostly start-up when two binaries' rates are compared, or so that each problem has
# K candidates as in RL (issue 37's batches: KC_BENCH_RUN_ARGS="--batch 8" passes kverify run
# its options; the copies of a problem are imported together). KC_BENCH_ONLY=GLOB keeps the
# problems whose name matches (e.g. '0[01]*': level 1's first 19).
throughput() {
    suite=$1 sdir="$OUT_DIR/references_$1" db="$OUT_DIR/throughput_$1.db"
    rm -rf "$sdir" "$db"*; mkdir -p "$sdir/copy"
    for m in "$KC_PROBLEMS/$suite"/*.json; do
        name=$(basename "$m" .json)
        # shellcheck disable=SC2254
        case $name in ${KC_BENCH_ONLY:-*}) ;; *) continue ;; esac
        "$KC_BIN/kverify" problems --show-reference "$suite/$name" > "$sdir/$name.cu" || return 1
        for c in $(seq "${KC_BENCH_TP_COPIES:-1}"); do
            f="$sdir/$name.cu"
            [ "$c" -gt 1 ] && { cat "$sdir/$name.cu"; echo "// copy $c"; } > "$sdir/copy/$name.cu" && f="$sdir/copy/$name.cu"
            "$KC_BIN/kverify" import --db "$db" --problem "$suite/$name" "$f" >/dev/null || return 1
        done
    done
    n=$(sql "$db" "SELECT count(*) FROM candidates")
    ( while :; do nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits 2>/dev/null; sleep 0.2; done ) > "$OUT_DIR/util_$suite.txt" &
    sampler=$!
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$KC_BIN/kverify" run --db "$db" ${KC_BENCH_RUN_ARGS:-} > "$OUT_DIR/throughput_$suite.log" 2>&1
    wall=$(python3 -c "import time; print(round(time.time() - $t0, 2))")
    kill $sampler 2>/dev/null
    echo "$suite: $(tail -3 "$OUT_DIR/throughput_$suite.log" | tr '\n' ' ')"
    sed -n 's/.*(\([0-9.]*\) candidates\/s).*/\1/p' "$OUT_DIR/throughput_$suite.log" | tail -1 > "$OUT_DIR/rate_$suite"
    echo "$suite verdicts: $(sql "$db" "SELECT verdict || ' ' || count(*) FROM v_latest_verification GROUP BY verdict" | tr '\n' ' ')"
    echo "$suite slowest verifications (s): $(sql "$db" "SELECT c.problem_id || '=' || round(json_extract(v.evidence_json, '$.stage_ms.checks_ms')/1000.0 + json_extract(v.evidence_json, '$.stage_ms.timing_ms')/1000.0, 1) FROM candidates c JOIN v_latest_verification v ON v.candidate_id = c.id ORDER BY 0 - json_extract(v.evidence_json, '$.stage_ms.checks_ms') - json_extract(v.evidence_json, '$.stage_ms.timing_ms') LIMIT 8" | tr '\n' ' ')"
    echo "$suite $(python3 "$KC_ROOT/tests/bench/phases.py" "$db" --wall "$wall" --workers "$("$KC_BIN/kverify" gpus --count)")"
    echo "$suite nvidia-smi utilisation during the batch: mean $(python3 -c 'import sys; v=[float(x) for x in open(sys.argv[1]).read().split() if x.strip().replace(".","").isdigit()]; print("%.0f%%" % (sum(v)/len(v)) if v else "n/a")' "$OUT_DIR/util_$suite.txt") over $n candidates"
}
if part throughput; then
    rm -f "$OUT_DIR"/rate_*
    # KC_BENCH_SUITES: which suites the throughput part runs (default all three)
    for suite in ${KC_BENCH_SUITES:-level1 level2 attention}; do
        ls "$KC_PROBLEMS/$suite"/*.json >/dev/null 2>&1 || continue
        throughput "$suite" || echo "$suite throughput: FAILED (see $OUT_DIR)"
    done
    echo "verified candidates/s, the references at default shapes (targets: level1 >= 3/s, level2 >= 2.5/s, attention >= 2/s):" \
        "level1 $(cat "$OUT_DIR/rate_level1" 2>/dev/null || echo n/a)/s," \
        "level2 $(cat "$OUT_DIR/rate_level2" 2>/dev/null || echo n/a)/s," \
        "attention $(cat "$OUT_DIR/rate_attention" 2>/dev/null || echo n/a)/s"
fi

# scaling SUITE COPIES: with several GPUs, the same batch (every reference of SUITE, COPIES times,
# each copy a distinct source) on one GPU and on all of them: candidates/s and the factor.
scaling() {
    suite=$1 copies=$2 sdir="$OUT_DIR/scaling_$1" db="$OUT_DIR/scaling_$1.db"
    rm -rf "$sdir"; mkdir -p "$sdir"
    for m in "$KC_PROBLEMS/$suite"/*.json; do
        name=$(basename "$m" .json)
        "$KC_BIN/kverify" problems --show-reference "$suite/$name" > "$sdir/$name.cu" || return 1
    done
    rate_on() { # CUDA_VISIBLE_DEVICES value
        rm -f "$db"*
        mkdir -p "$sdir/copy"
        for f in "$sdir"/*.cu; do
            for c in $(seq "$copies"); do
                { cat "$f"; echo "// copy $c"; } > "$sdir/copy/candidate.cu"
                "$KC_BIN/kverify" import --db "$db" --problem "$suite/$(basename "$f" .cu)" "$sdir/copy/candidate.cu" >/dev/null || return 1
            done
        done
        CUDA_VISIBLE_DEVICES=$1 "$KC_BIN/kverify" run --db "$db" > "$OUT_DIR/scaling_$1.log" 2>&1
        sed -n 's/.*(\([0-9.]*\) candidates\/s).*/\1/p' "$OUT_DIR/scaling_$1.log" | tail -1
    }
    all=$(seq -s, 0 $((gpus - 1)))
    one=$(rate_on 0); cp "$db" "$OUT_DIR/scaling_one.db"; many=$(rate_on "$all")
    echo "$suite x$copies scaling: 1 GPU $one/s, $gpus GPUs $many/s: $(python3 -c "print('%.2fx' % ($many / $one))" 2>/dev/null || echo n/a)" \
         "(verdicts on $gpus GPUs: $(sql "$db" "SELECT verdict || ' ' || count(*) FROM v_latest_verification GROUP BY verdict" | tr '\n' ' '))"
    # where each batch's time went: the GPU clients' phases, compile, and the clients' idle time
    for n in one "$all"; do
        log="$OUT_DIR/scaling_$( [ "$n" = one ] && echo 0 || echo "$n").log" d=$( [ "$n" = one ] && echo "$OUT_DIR/scaling_one.db" || echo "$db")
        wall=$(sed -n 's/.* in \([0-9.]*\) s (.*/\1/p' "$log" | tail -1)
        w=$( [ "$n" = one ] && echo 1 || echo "$gpus")
        echo "$suite scaling, $w GPU(s): $(python3 "$KC_ROOT/tests/bench/phases.py" "$d" --wall "${wall:-0}" --workers "$w")"
    done
}
# level3 (not in the default parts): the 50 networks' references as candidates (issue 38's
# suite target: 1 candidate/s or better).
if part level3; then
    throughput level3 || echo "level3 throughput: FAILED (see $OUT_DIR)"
    echo "level3 references as candidates: $(cat "$OUT_DIR/rate_level3" 2>/dev/null || echo n/a)/s (target >= 1/s)"
fi
if part scaling; then
    gpus=$("$KC_BIN/kverify" gpus --count 2>/dev/null || echo 1)
    if [ "${gpus:-1}" -ge 2 ]; then
        scaling level1 "${KC_BENCH_COPIES:-2}" || echo "level1 scaling: FAILED (see $OUT_DIR)"
    else
        echo "SKIP: one GPU: multi-GPU scaling not measured"
    fi
fi

if part spread; then
    for prob in 019_relu 023_softmax 001_square_matmul; do
        for i in 1 2 3 4 5 6 7 8 9 10; do
            "$KC_BIN/kverify" check --problem "level1/$prob" "$refs/$prob.cu" --json | tr -d '\n'
            echo
        done | python3 "$KC_ROOT/tests/bench/spread.py" "level1/$prob"
    done
fi

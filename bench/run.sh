#!/bin/sh
# The Robertson benchmark of BENCHMARKS.md: odetensor vs raw CVODE vs SciPy.
# usage: sh bench/run.sh [BINDIR]   (make bench builds BINDIR = build/bench)
# Environment: NBATCH (10000 lanes), ROUNDS (5 interleaved timing rounds),
# PAIRS (15 short rounds of PAIR_LANES = 1000 lanes, for paired ratios),
# INTERLEAVE (3 runs of bench/interleave: both solvers in one process),
# CG_LANES (500 lanes under callgrind), SCIPY_LANES (200), EXACT_LANES (20).
# Prints the steps it takes on stderr, then markdown tables on stdout. Run it
# on an otherwise idle machine: the control row (two raw processes at once)
# shows what the machine's cores gave while it ran.
set -eu
BIN=${1:-build/bench}
NBATCH=${NBATCH:-10000}
ROUNDS=${ROUNDS:-5}
PAIRS=${PAIRS:-15}
INTERLEAVE=${INTERLEAVE:-3}
PAIR_LANES=${PAIR_LANES:-1000}
CG_LANES=${CG_LANES:-500}
SCIPY_LANES=${SCIPY_LANES:-200}
EXACT_LANES=${EXACT_LANES:-20}
PY=/usr/bin/python3
HERE=$(dirname "$0")
OUT=$BIN/out
mkdir -p "$OUT"
RUNS=$OUT/runs.txt
: >"$RUNS"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

say() { echo "bench: $*" >&2; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$2"; }

# run LABEL CMD...: one run under /usr/bin/time; appends "LABEL seconds
# rss_kib hash steps cpu_seconds" to $RUNS (seconds: the program's own clock
# around the solve; cpu_seconds: user + system time of the whole process).
run() {
    label=$1
    shift
    /usr/bin/time -f '%M %U %S' -o "$OUT/rss.txt" "$@" >"$OUT/line.txt"
    echo "$label $(field seconds "$OUT/line.txt")" \
        "$(awk '{ print $1 }' "$OUT/rss.txt") $(field hash "$OUT/line.txt")" \
        "$(field steps "$OUT/line.txt") $(awk '{ print $2 + $3 }' "$OUT/rss.txt")" >>"$RUNS"
}
# pair: two raw_cvode processes on half the lanes each, at once: what the
# machine gives two independent single-threaded jobs (the ceiling for 2 threads).
pair() {
    half=$((NBATCH / 2))
    t0=$(date +%s.%N)
    "$BIN/raw_cvode" "$half" >/dev/null &
    "$BIN/raw_cvode" $((NBATCH - half)) >/dev/null
    wait
    echo "pair $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.6f", b - a }') 0 - 0 0" >>"$RUNS"
}
# stat LABEL COLUMN min|median|max: over the runs of LABEL.
stat() {
    awk -v l="$1" -v c="$2" '$1 == l { print $c }' "$RUNS" | sort -g | awk -v how="$3" '
        { v[NR] = $1 }
        END { if (how == "min") print v[1]; else if (how == "max") print v[NR];
              else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
# paired NUM DEN: median over the paired rounds of NUM's seconds / DEN's.
paired() {
    awk -v a="p_$1" -v b="p_$2" '$1 == a { x[++i] = $2 } $1 == b { y[++j] = $2 }
        END { for (k = 1; k <= i; k++) print x[k] / y[k] }' "$RUNS" | sort -g |
        awk '{ v[NR] = $1 }
            END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                  printf "%.3f (%.3f..%.3f)", m, v[int(NR / 4) + 1], v[NR - int(NR / 4)] }'
}
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
yesno() { awk "BEGIN { print (($1) ? \"yes\" : \"**no**\") }"; }

# 1. Same answers: raw, odetensor 1 and 2 threads, outputs dumped and compared.
say "correctness: $NBATCH lanes, raw vs odetensor 1 and 2 threads"
run warm_raw "$BIN/raw_cvode" "$NBATCH" "$OUT/raw.f64"
run warm_ot1 "$BIN/ot_robertson" "$NBATCH" 1 "$OUT/ot1.f64"
run warm_ot2 "$BIN/ot_robertson" "$NBATCH" 2 "$OUT/ot2.f64"
CMP1=$($PY "$HERE/compare.py" "$OUT/raw.f64" "$OUT/ot1.f64") || { echo "$CMP1"; exit 1; }
CMP2=$($PY "$HERE/compare.py" "$OUT/ot1.f64" "$OUT/ot2.f64") || { echo "$CMP2"; exit 1; }

# 2. Time: interleaved rounds, the order reversed every other round.
for r in $(seq "$ROUNDS"); do
    say "timing round $r of $ROUNDS"
    if [ $((r % 2)) -eq 1 ]; then
        run raw "$BIN/raw_cvode" "$NBATCH"
        run ot1 "$BIN/ot_robertson" "$NBATCH" 1
        run ot2 "$BIN/ot_robertson" "$NBATCH" 2
        pair
    else
        pair
        run ot2 "$BIN/ot_robertson" "$NBATCH" 2
        run ot1 "$BIN/ot_robertson" "$NBATCH" 1
        run raw "$BIN/raw_cvode" "$NBATCH"
    fi
done
# 2b. Paired ratios: short rounds of raw, odetensor 1 and 2 threads in a
# rotating order; each round's own ratios, then their median, cancel the slow
# drift of this machine's speed that the long rounds above suffer from.
for r in $(seq "$PAIRS"); do
    [ $((r % 5)) -eq 1 ] && say "paired round $r of $PAIRS ($PAIR_LANES lanes)"
    case $((r % 3)) in
    0) set -- raw ot1 ot2 ;;
    1) set -- ot1 ot2 raw ;;
    *) set -- ot2 raw ot1 ;;
    esac
    for p in "$@"; do
        case $p in
        raw) run "p_raw" "$BIN/raw_cvode" "$PAIR_LANES" ;;
        ot1) run "p_ot1" "$BIN/ot_robertson" "$PAIR_LANES" 1 ;;
        ot2) run "p_ot2" "$BIN/ot_robertson" "$PAIR_LANES" 2 ;;
        esac
    done
done
# 2c. Both solvers in one process, alternating blocks of 100 lanes.
for r in $(seq "$INTERLEAVE"); do
    say "interleaved run $r of $INTERLEAVE ($NBATCH lanes in blocks of 100)"
    "$BIN/interleave" "$NBATCH" 100 >"$OUT/line.txt"
    echo "inter $(field ratio "$OUT/line.txt") 0 - 0 0 $(field median_block_ratio "$OUT/line.txt")" \
        "$(field raw_seconds "$OUT/line.txt") $(field ot_seconds "$OUT/line.txt")" >>"$RUNS"
done
for r in 1 2 3; do
    run base_raw "$BIN/raw_cvode" 1
done

# 3. Instructions: callgrind on CG_LANES lanes, one thread.
say "callgrind: $CG_LANES lanes (about a minute)"
cg_total() { sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$OUT/cg.$1.log"; }
cg_solve() {
    callgrind_annotate --inclusive=yes "$OUT/cg.$1" 2>/dev/null |
        awk '/_solve_all /{ gsub(",", "", $1); print $1; exit }'
}
valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.raw" \
    "$BIN/raw_cvode" "$CG_LANES" >/dev/null 2>"$OUT/cg.raw.log"
valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.ot" \
    "$BIN/ot_robertson" "$CG_LANES" 1 >/dev/null 2>"$OUT/cg.ot.log"
IR_RAW=$(cg_total raw) IR_OT=$(cg_total ot)
IRS_RAW=$(cg_solve raw) IRS_OT=$(cg_solve ot)

# 4. SciPy on the first SCIPY_LANES lanes, checked against odetensor's answers.
say "scipy: $SCIPY_LANES lanes x 3 methods, Radau reference on $EXACT_LANES (a few minutes)"
$PY "$HERE/scipy_robertson.py" --lanes "$SCIPY_LANES" --nbatch "$NBATCH" \
    --exact "$EXACT_LANES" --reference "$OUT/ot1.f64" >"$OUT/scipy.txt"

# ---- Report ----------------------------------------------------------------
RAW_MIN=$(stat raw 2 min) RAW_MED=$(stat raw 2 median)
OT1_MIN=$(stat ot1 2 min) OT1_MED=$(stat ot1 2 median)
OT2_MIN=$(stat ot2 2 min) OT2_MED=$(stat ot2 2 median)
R1=$(calc %.3f "$OT1_MIN / $RAW_MIN") R1M=$(calc %.3f "$OT1_MED / $RAW_MED")
SP=$(calc %.2f "$OT1_MIN / $OT2_MIN") SPM=$(calc %.2f "$OT1_MED / $OT2_MED")
C_RAW=$(stat raw 6 min) C_OT1=$(stat ot1 6 min) C_OT2=$(stat ot2 6 min)
CR1=$(calc %.3f "$C_OT1 / $C_RAW") CR2=$(calc %.3f "$C_OT2 / $C_OT1")
PAIR_MIN=$(stat pair 2 min) PAIR_MED=$(stat pair 2 median)
PSP=$(calc %.2f "$RAW_MIN / $PAIR_MIN") PSPM=$(calc %.2f "$RAW_MED / $PAIR_MED")
IRR=$(calc %.4f "$IR_OT / $IR_RAW") IRSR=$(calc %.4f "$IRS_OT / $IRS_RAW")
OUT_KIB=$(calc %.0f "3 * 50 * $NBATCH * 8 / 1024")
IN_KIB=$(calc %.0f "3 * $NBATCH * 8 / 1024")
BASE=$(stat base_raw 3 median)
RSS_RAW=$(stat raw 3 max) RSS1=$(stat ot1 3 max) RSS2=$(stat ot2 3 max)
BUD1=$((BASE + IN_KIB + OUT_KIB + 1024)) BUD2=$((BASE + IN_KIB + OUT_KIB + 2048))
STEPS=$(stat raw 5 max)
ot_lane=$(calc %.6g "$OT1_MIN / $NBATCH")

echo "Robertson, $NBATCH lanes, BDF + dense user Jacobian, rtol 1e-6, atol 1e-8, 50 times" \
    "1e-5..1e5, CV_NORMAL; $(nproc) cores; $ROUNDS interleaved rounds"
echo
echo "| measure | raw CVODE | odetensor | ratio | target | met |"
echo "|---|---|---|---|---|---|"
echo "| time, 1 thread, min of $ROUNDS (s) | $RAW_MIN | $OT1_MIN | $R1 | <= 1.05 | $(yesno "$R1 <= 1.05") |"
echo "| time, 1 thread, median of $ROUNDS (s) | $RAW_MED | $OT1_MED | $R1M | (<= 1.05) | $(yesno "$R1M <= 1.05") |"
echo "| paired: median (quartiles) of ot 1 thread / raw over $PAIRS rounds of $PAIR_LANES lanes" \
    "| | | $(paired ot1 raw) | <= 1.05 | $(yesno "$(paired ot1 raw | cut -d' ' -f1) <= 1.05") |"
echo "| interleaved in one process, blocks of 100 lanes: median (min..max) of $INTERLEAVE" \
    "runs' total ratio | $(stat inter 8 median) s | $(stat inter 9 median) s |" \
    "$(stat inter 2 median) ($(stat inter 2 min)..$(stat inter 2 max)) | <= 1.05 |" \
    "$(yesno "$(stat inter 2 median) <= 1.05") |"
echo "| CPU time (user + sys), 1 thread, min of $ROUNDS (s) | $C_RAW | $C_OT1 | $CR1 | (<= 1.05) | $(yesno "$CR1 <= 1.05") |"
echo "| instructions (Ir), whole program, $CG_LANES lanes | $IR_RAW | $IR_OT | $IRR | <= 1.03 | $(yesno "$IRR <= 1.03") |"
echo "| Ir inside raw_/ot_solve_all (the timed part), $CG_LANES lanes | $IRS_RAW | $IRS_OT | $IRSR | (<= 1.03) | $(yesno "$IRSR <= 1.03") |"
echo "| 2 threads vs 1: speedup of min (median) | | $OT2_MIN s | $SP ($SPM) | >= 1.8 | $(yesno "$SP >= 1.8") |"
echo "| paired: median (quartiles) of 1 thread / 2 threads over $PAIRS rounds of $PAIR_LANES lanes" \
    "| | | $(paired ot1 ot2) | >= 1.8 | $(yesno "$(paired ot1 ot2 | cut -d' ' -f1) >= 1.8") |"
echo "| control: 2 raw processes, $((NBATCH / 2)) lanes each, at once vs raw alone" \
    "| $PAIR_MIN s | | $PSP ($PSPM) | (machine ceiling) | |"
echo "| CPU time, 2 threads vs 1, min (parallel overhead) | | $C_OT2 s | $CR2 | (~1.0) | |"
echo "| peak RSS, 1 thread (KiB) | $RSS_RAW | $RSS1 | budget $BUD1 | <= budget | $(yesno "$RSS1 <= $BUD1") |"
echo "| peak RSS, 2 threads (KiB) | | $RSS2 | budget $BUD2 | <= budget | $(yesno "$RSS2 <= $BUD2") |"
echo "| peak RSS above raw_cvode's (same output array and inputs), 1 / 2 threads (KiB)" \
    "| | $((RSS1 - RSS_RAW)) / $((RSS2 - RSS_RAW)) | | (<= 1024 / 2048) |" \
    "$(yesno "$((RSS1 - RSS_RAW)) <= 1024") / $(yesno "$((RSS2 - RSS_RAW)) <= 2048") |"
echo
echo "- steps, all lanes: $STEPS (the same in every run);" \
    "raw vs odetensor 1 thread: $(echo "$CMP1" | cut -d' ' -f2-);" \
    "1 vs 2 threads: $(echo "$CMP2" | cut -d' ' -f2-)"
echo "- RSS: the largest of the timed runs; budget = baseline $BASE KiB (raw_cvode on 1 lane," \
    "median of 3) + rates $IN_KIB KiB" \
    "+ output tensor $OUT_KIB KiB + 1024 KiB per thread"
echo
echo "| solver ($SCIPY_LANES of $NBATCH lanes, per lane extrapolated) | s per lane |" \
    "x odetensor 1 thread | est. s for $NBATCH lanes | err vs odetensor (tol units) |" \
    "err vs Radau 1e-12 (tol units, $EXACT_LANES lanes) |"
echo "|---|---|---|---|---|---|"
echo "| odetensor, 1 thread (all lanes, min) | $ot_lane | 1 | $OT1_MIN | 0 |" \
    "$(grep '^odetensor ' "$OUT/scipy.txt" >"$OUT/line.txt"; field err_exact_tol "$OUT/line.txt") |"
grep '^scipy_' "$OUT/scipy.txt" | while read -r name rest; do
    echo "$name $rest" >"$OUT/line.txt"
    spl=$(field seconds_per_lane "$OUT/line.txt")
    echo "| $name | $(calc %.6g "$spl") | $(calc %.1f "$spl / $ot_lane") |" \
        "$(calc %.1f "$spl * $NBATCH") |" \
        "$(field err_ot_tol "$OUT/line.txt") | $(field err_exact_tol "$OUT/line.txt") |"
done
echo
echo "$(head -1 "$OUT/scipy.txt" | sed 's/^# //'); load average before $LOAD0," \
    "after $(cut -d' ' -f1-3 /proc/loadavg); every run in $RUNS"

#!/bin/sh
# The WebAssembly benchmarks of BENCHMARKS.md (issue 5); `make bench-wasm`
# builds the programs and runs this.
# usage: sh bench/wasm/run.sh NATIVE CMOD SPLIT_MJS NATIVE_O3 MODES MODES_CMOD
#   NATIVE     build/bench/wasm_native (Robertson, libodetensor.a + Debian's
#              libsundials, C callbacks)
#   CMOD       build/bench-wasm/robertson_c.mjs (Robertson, C callbacks in wasm)
#   SPLIT_MJS  build/bench-wasm/split/odetensor.mjs (+ .wasm beside it)
#   NATIVE_O3  build/bench/wasm_native_o3 (the same with SUNDIALS built -O3)
#   MODES      build/bench/wasm_modes (bench/wasm/modes.c: Robertson and
#              Lotka-Volterra, lanes and lockstep mode, natively)
#   MODES_CMOD build/bench-wasm/modes_c.mjs (the same C inside wasm)
# Environment: NBATCH_WASM (2000 Robertson lanes), ROUNDS_WASM (5 rounds of
# the 2 native and 3 wasm variants, one process each, rotating order),
# INTERLEAVE_WASM (3 runs of the three wasm variants in one process, blocks of
# 100 lanes), MODES_ROB (2000 Robertson lanes) and MODES_LV (1000
# Lotka-Volterra lanes) for the by-mode table, ROUNDS_MODES (ROUNDS_WASM
# rounds of its 12 variants), LV_LANES (1000) and PEER_REPS (5) for the npm
# peers (bench/wasm/peers.mjs), NODE (node), OUT_WASM (where the runs and
# outputs go: build/bench-wasm/out).
# Prints progress on stderr and markdown tables on stdout. Run it on an
# otherwise idle machine; the load averages before and after are printed.
set -eu
NATIVE=$1
CMOD=$2
SPLIT=$3
NATIVE_O3=$4
MODES=$5
MODES_C=$6
NBATCH=${NBATCH_WASM:-2000}
ROUNDS=${ROUNDS_WASM:-5}
INTERLEAVE=${INTERLEAVE_WASM:-3}
MODES_ROB=${MODES_ROB:-2000}
MODES_LV=${MODES_LV:-1000}
ROUNDS_MODES=${ROUNDS_MODES:-$ROUNDS}
LV_LANES=${LV_LANES:-1000}
PEER_REPS=${PEER_REPS:-${ODEX_REPS:-5}}
NODE=${NODE:-node}
HERE=$(dirname "$0")
OUT=${OUT_WASM:-build/bench-wasm/out}
mkdir -p "$OUT"
RUNS=$OUT/runs.txt
: >"$RUNS"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
# glibc's FMA variants of pow/exp can differ from the generic code in the
# last bit (wasm uses musl's generic code); see test-wasm in mk/wasm.mk.
GENERIC=glibc.cpu.hwcaps=-FMA,-AVX2

say() { echo "bench-wasm: $*" >&2; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$2"; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
yesno() { awk "BEGIN { print (($1) ? \"yes\" : \"**no**\") }"; }
robertson() { "$NODE" "$HERE/robertson.mjs" "$@"; }

# run LABEL CMD...: appends "LABEL round seconds steps" to $RUNS.
run() {
    label=$1
    shift
    "$@" >"$OUT/line.txt"
    echo "$label $ROUND $(field seconds "$OUT/line.txt") $(field steps "$OUT/line.txt")" >>"$RUNS"
}
stat() {
    awk -v l="$1" '$1 == l { print $3 }' "$RUNS" | sort -g | awk -v how="$2" '
        { v[NR] = $1 }
        END { if (how == "min") print v[1]; else if (how == "max") print v[NR];
              else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
# paired NUM DEN: median (min..max) over the rounds of NUM's seconds / DEN's.
paired() {
    awk -v a="$1" -v b="$2" '$1 == a { x[$2] = $3 } $1 == b { y[$2] = $3 }
        END { for (r in x) if (r in y) print x[r] / y[r] }' "$RUNS" | sort -g |
        awk '{ v[NR] = $1 }
            END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                  printf "%.3f (%.3f..%.3f)", m, v[1], v[NR] }'
}

# 1. Same inputs, same answers: native writes the inputs; each side's outputs
# are compared with native's, with glibc's default libm and its generic one.
ROUND=0
say "correctness: $NBATCH lanes, native (default and generic libm) and 3 wasm variants"
run c_native "$NATIVE" "$NBATCH" "$OUT/inputs.f64" "$OUT/native.f64"
run c_native_generic env GLIBC_TUNABLES=$GENERIC "$NATIVE" "$NBATCH" "$OUT/inputs_generic.f64" \
    "$OUT/native_generic.f64"
cmp -s "$OUT/inputs.f64" "$OUT/inputs_generic.f64" || { echo "inputs differ between libms" >&2; exit 1; }
run c_native_o3 "$NATIVE_O3" "$NBATCH" "$OUT/inputs_o3.f64" "$OUT/native_o3.f64"
CMP_O3=$(robertson compare "$OUT/native.f64" "$OUT/native_o3.f64" | cut -d' ' -f2-)
for m in direct shim js; do
    run "c_$m" robertson run "$m" "$NBATCH" "$OUT/inputs.f64" "$CMOD" "$OUT/$m.f64"
done
CMP_DEF=$(robertson compare "$OUT/native.f64" "$OUT/js.f64" | cut -d' ' -f2-)
CMP_GEN=""
for m in direct shim js; do
    CMP_GEN="$CMP_GEN $m: $(robertson compare "$OUT/native_generic.f64" "$OUT/$m.f64" | cut -d' ' -f2-);"
done
STEPS_NATIVE=$(awk '$1 ~ /^c_native(_o3)?$/ { print $4 }' "$RUNS" | sort -u | paste -sd/ -)
STEPS_GENERIC=$(awk '$1 == "c_native_generic" { print $4 }' "$RUNS")
STEPS_WASM=$(awk '$1 ~ /^c_(direct|shim|js)$/ { print $4 }' "$RUNS" | sort -u | paste -sd/ -)

# 2. Time: one process per variant, the order rotated every round.
for ROUND in $(seq "$ROUNDS"); do
    say "timing round $ROUND of $ROUNDS ($NBATCH lanes x 5 variants)"
    case $((ROUND % 5)) in
    1) set -- native native_o3 direct shim js ;;
    2) set -- js native native_o3 direct shim ;;
    3) set -- shim js native native_o3 direct ;;
    4) set -- direct shim js native native_o3 ;;
    *) set -- native_o3 direct shim js native ;;
    esac
    for v in "$@"; do
        case $v in
        native) run native "$NATIVE" "$NBATCH" "$OUT/inputs_t.f64" ;;
        native_o3) run native_o3 "$NATIVE_O3" "$NBATCH" "$OUT/inputs_t.f64" ;;
        *) run "$v" robertson run "$v" "$NBATCH" "$OUT/inputs.f64" "$CMOD" ;;
        esac
    done
done

# 3. The three wasm variants in one process, in turns on blocks of 100 lanes.
: >"$OUT/interleave.txt"
for r in $(seq "$INTERLEAVE"); do
    say "interleaved run $r of $INTERLEAVE ($NBATCH lanes in blocks of 100)"
    robertson interleave "$NBATCH" "$OUT/inputs.f64" "$CMOD" 100 >>"$OUT/interleave.txt"
done
imed() {
    sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$OUT/interleave.txt" | sort -g |
        awk '{ v[NR] = $1 } END { printf "%.3f (%.3f..%.3f)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

# 4. wasm against native by problem and mode (bench/wasm/modes.c): outputs
# compared with glibc's generic libm (bitwise) and its default one, then
# ROUNDS_MODES rounds of the 12 variants (native, wasm C, wasm JS for 4
# cells), one process each, the order rotated every round.
modes_lanes() { case $1 in rob) echo "$MODES_ROB" ;; *) echo "$MODES_LV" ;; esac; }
CELLS="rob_lanes rob_lockstep lv_lanes lv_lockstep"
ROUND=0
say "by mode: correctness ($MODES_ROB Robertson, $MODES_LV Lotka-Volterra lanes)"
: >"$OUT/modes_check.txt"
for cell in $CELLS; do
    p=${cell%_*} m=${cell#*_} nb=$(modes_lanes "${cell%_*}")
    run "m_native_gen_$cell" env GLIBC_TUNABLES=$GENERIC "$MODES" "$p" "$m" "$nb" \
        "$OUT/m_in_$p.f64" "$OUT/m_native_gen_$cell.f64"
    run "m_native_def_$cell" "$MODES" "$p" "$m" "$nb" "$OUT/m_in_def_$p.f64" "$OUT/m_native_def_$cell.f64"
    cmp -s "$OUT/m_in_$p.f64" "$OUT/m_in_def_$p.f64" || { echo "$p: inputs differ between libms" >&2; exit 1; }
    for v in c js; do
        run "mk_${v}_$cell" "$NODE" "$HERE/modes.mjs" run "$v" "$p" "$m" "$nb" "$OUT/m_in_$p.f64" \
            "$MODES_C" "$OUT/m_${v}_$cell.f64"
        echo "$cell $v generic $(robertson compare "$OUT/m_native_gen_$cell.f64" "$OUT/m_${v}_$cell.f64" |
            cut -d' ' -f2-)" >>"$OUT/modes_check.txt"
    done
    echo "$cell js default $(robertson compare "$OUT/m_native_def_$cell.f64" "$OUT/m_js_$cell.f64" |
        cut -d' ' -f2-)" >>"$OUT/modes_check.txt"
done
VARIANTS=""
for cell in $CELLS; do VARIANTS="$VARIANTS native_$cell c_$cell js_$cell"; done
for ROUND in $(seq "$ROUNDS_MODES"); do
    say "by mode: timing round $ROUND of $ROUNDS_MODES (12 variants)"
    # rotate the 12 variants by 5 * ROUND places (5 is coprime to 12)
    set -- $VARIANTS
    k=$(((5 * ROUND) % 12))
    while [ "$k" -gt 0 ]; do
        v=$1
        shift
        set -- "$@" "$v"
        k=$((k - 1))
    done
    for v in "$@"; do
        cell=${v#*_} p=${cell%_*} m=${cell#*_}
        nb=$(modes_lanes "$p")
        case $v in
        native_*) run "m_$v" "$MODES" "$p" "$m" "$nb" "$OUT/m_in_t_$p.f64" ;;
        *) run "m_$v" "$NODE" "$HERE/modes.mjs" run "${v%%_*}" "$p" "$m" "$nb" "$OUT/m_in_$p.f64" \
            "$MODES_C" ;;
        esac
    done
done

# 5. The npm peers at equal accuracy.
say "peers: Lotka-Volterra $LV_LANES lanes and Van der Pol mu = 1000, $PEER_REPS rounds (a few minutes)"
"$NODE" "$HERE/peers.mjs" "$LV_LANES" "$PEER_REPS" >"$OUT/peers.md"

# ---- Report ----------------------------------------------------------------
NAT_MED=$(stat native median)
O3_MED=$(stat native_o3 median)
echo "Robertson, $NBATCH lanes (bench/robertson.h: rates +-10 %, BDF + dense Jacobian, rtol 1e-6," \
    "atol 1e-8, 50 times 1e-5..1e5), 1 thread; $ROUNDS rounds, one process per run"
echo
echo "| variant | time, min (s) | time, median (s) | / native, median | / native, paired:" \
    "median (min..max) of the rounds | / native -O3, median | / native -O3, paired | target | met |"
echo "|---|---|---|---|---|---|---|---|---|"
for v in native native_o3 direct shim js; do
    case $v in
    native) label="native: libodetensor.a + Debian's libsundials (built -O0), C callbacks" target="" ;;
    native_o3) label="native, SUNDIALS built -O3 from the same source (control)" target="" ;;
    direct) label="wasm, C callbacks (bench/ot_robertson.c compiled to wasm)" target="" ;;
    shim) label="wasm, C callbacks through the JS API's shim (shim.c)" target="" ;;
    js) label="wasm, JS callbacks (the npm package's API)" target="<= 2" ;;
    esac
    mn=$(stat "$v" min) md=$(stat "$v" median)
    met=""
    [ -n "$target" ] && met="$(yesno "$md / $NAT_MED <= 2") / $(yesno "$md / $O3_MED <= 2") (vs -O3)"
    pn="" po=""
    [ "$v" != native ] && pn=$(paired "$v" native)
    [ "$v" != native_o3 ] && po=$(paired "$v" native_o3)
    echo "| $label | $mn | $md | $(calc %.3f "$md / $NAT_MED") | $pn | $(calc %.3f "$md / $O3_MED") |" \
        "$po | $target | $met |"
done
echo
echo "- steps, all lanes: native $STEPS_NATIVE (glibc's default libm), $STEPS_GENERIC (generic" \
    "libm: GLIBC_TUNABLES=$GENERIC), wasm $STEPS_WASM"
echo "- outputs vs native, default libm: wasm js $CMP_DEF; native -O3 SUNDIALS $CMP_O3"
echo "- outputs vs native, generic libm:$CMP_GEN"
echo
echo "JS callbacks vs C callbacks inside wasm: $INTERLEAVE runs, each with the three variants" \
    "in one node process taking turns on blocks of 100 lanes ($NBATCH lanes)"
echo
echo "| ratio | median (min..max) over runs of the total ratio | median block ratio, median (min..max) over runs |"
echo "|---|---|---|"
echo "| JS callbacks / C callbacks (direct) | $(imed js_ratio) | $(imed median_block_js) |"
echo "| JS callbacks / C callbacks through the shim | $(imed js_shim_ratio) | |"
echo "| C through the shim / C direct | $(imed shim_ratio) | $(imed median_block_shim) |"
echo
echo "- every block's outputs bitwise equal across the three variants; totals per run in $OUT/interleave.txt"
echo
echo "wasm against native by problem and mode (bench/wasm/modes.c, the same C natively and in wasm;" \
    "one thread; Robertson $MODES_ROB lanes: BDF + jac, rtol 1e-6, atol 1e-8, 50 times 1e-5..1e5;" \
    "Lotka-Volterra $MODES_LV lanes: Adams, rtol 1e-8, atol 1e-10, 41 times 0..20; lockstep: one block" \
    "of every lane); $ROUNDS_MODES rounds, one process per run"
echo
echo "| problem, mode | native, median (s) | wasm C, median (s) | wasm C / native, medians |" \
    "wasm C / native, paired: median (min..max) | wasm JS, median (s) | wasm JS / native, medians |" \
    "wasm JS / native, paired | steps, all lanes (native / wasm) | target <= 2 (1.5), C | JS |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for cell in $CELLS; do
    n=$(stat "m_native_$cell" median) c=$(stat "m_c_$cell" median) j=$(stat "m_js_$cell" median)
    sn=$(awk -v l="m_native_def_$cell" '$1 == l { print $4 }' "$RUNS")
    sw=$(awk -v l="mk_c_$cell" '$1 == l { print $4 }' "$RUNS")
    vc=$(yesno "$c / $n <= 2") vj=$(yesno "$j / $n <= 2")
    vc="$vc ($(yesno "$c / $n <= 1.5"))" vj="$vj ($(yesno "$j / $n <= 1.5"))"
    echo "| $(echo "$cell" | sed 's/rob_/Robertson, /; s/lv_/Lotka-Volterra, /') | $n | $c |" \
        "$(calc %.3f "$c / $n") | $(paired "m_c_$cell" "m_native_$cell") | $j | $(calc %.3f "$j / $n") |" \
        "$(paired "m_js_$cell" "m_native_$cell") | $sn / $sw | $vc | $vj |"
done
echo
echo "- outputs, wasm vs native with glibc's generic libm (GLIBC_TUNABLES=$GENERIC) and, for JS," \
    "with its default one:"
sed 's/^/  - /' "$OUT/modes_check.txt"
echo
cat "$OUT/peers.md"

# Size: the package as shipped (one file, wasm as base64) and a split build.
DIST=bindings/wasm/dist/odetensor.mjs
API=bindings/wasm/index.mjs
WASM=${SPLIT%.mjs}.wasm
sz() { wc -c <"$1" | tr -d ' '; }
gz() { gzip -9c "$1" | wc -c | tr -d ' '; }
kib() { calc %.1f "$1 / 1024"; }
echo "Size (bytes; gzip -9; target: .wasm + JS glue <= 250 KB gzipped)"
echo
echo "| file | bytes | gzipped | gzipped KiB |"
echo "|---|---|---|---|"
for f in "$DIST" "$API" "$WASM" "$SPLIT"; do
    echo "| \`$f\` | $(sz "$f") | $(gz "$f") | $(kib "$(gz "$f")") |"
done
ONE=$(($(gz "$DIST") + $(gz "$API"))) TWO=$(($(gz "$WASM") + $(gz "$SPLIT") + $(gz "$API")))
echo "| shipped: dist/odetensor.mjs + index.mjs | $(($(sz "$DIST") + $(sz "$API"))) | $ONE |" \
    "$(kib "$ONE") (target <= 250 KB: $(yesno "$ONE <= 250000")) |"
echo "| split build: .wasm + glue + index.mjs | $(($(sz "$WASM") + $(sz "$SPLIT") + $(sz "$API"))) |" \
    "$TWO | $(kib "$TWO") (target <= 250 KB: $(yesno "$TWO <= 250000")) |"
echo
echo "node $("$NODE" --version), emscripten $(emcc --version 2>/dev/null | head -1 | sed 's/.*) \([0-9.]*\).*/\1/'), odex" \
    "$(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$HERE/node_modules/odex/package.json"), ode45-cash-karp" \
    "$(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$HERE/node_modules/ode45-cash-karp/package.json"); load average before" \
    "$LOAD0, after $(cut -d' ' -f1-3 /proc/loadavg); every run in $RUNS"

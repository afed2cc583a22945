#!/bin/sh
# The WebAssembly benchmarks of BENCHMARKS.md (issue 5); `make bench-wasm`
# builds the programs and runs this.
# usage: sh bench/wasm/run.sh NATIVE CMOD SPLIT_MJS NATIVE_O3
#   NATIVE     build/bench/wasm_native (Robertson, libodetensor.a + Debian's
#              libsundials, C callbacks)
#   CMOD       build/bench-wasm/robertson_c.mjs (Robertson, C callbacks in wasm)
#   SPLIT_MJS  build/bench-wasm/split/odetensor.mjs (+ .wasm beside it)
#   NATIVE_O3  build/bench/wasm_native_o3 (the same with SUNDIALS built -O3)
# Environment: NBATCH_WASM (2000 Robertson lanes), ROUNDS_WASM (5 rounds of
# the 2 native and 3 wasm variants, one process each, rotating order),
# INTERLEAVE_WASM (3 runs of the three wasm variants in one process, blocks of
# 100 lanes), LV_LANES (1000), ODEX_REPS (5), NODE (node), OUT_WASM (where the
# runs and outputs go: build/bench-wasm/out).
# Prints progress on stderr and markdown tables on stdout. Run it on an
# otherwise idle machine; the load averages before and after are printed.
set -eu
NATIVE=$1
CMOD=$2
SPLIT=$3
NATIVE_O3=$4
NBATCH=${NBATCH_WASM:-2000}
ROUNDS=${ROUNDS_WASM:-5}
INTERLEAVE=${INTERLEAVE_WASM:-3}
LV_LANES=${LV_LANES:-1000}
ODEX_REPS=${ODEX_REPS:-5}
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

# 4. odex.
say "odex: Lotka-Volterra $LV_LANES lanes and Van der Pol mu = 1000, $ODEX_REPS rounds (a few minutes)"
"$NODE" "$HERE/odex.mjs" "$LV_LANES" "$ODEX_REPS" >"$OUT/odex.md"

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
cat "$OUT/odex.md"

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
    "$(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$HERE/node_modules/odex/package.json"); load average before" \
    "$LOAD0, after $(cut -d' ' -f1-3 /proc/loadavg); every run in $RUNS"

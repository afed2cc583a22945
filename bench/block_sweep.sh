#!/bin/sh
# The default lockstep block size (issue 12, item 3): lockstep in blocks of B
# on 2 threads against lanes mode on 2 threads, over rate spreads (Robertson,
# 10,000 lanes, the slow rate k1 over 0, 2 and 4 decades) and system sizes (a
# 1-D Brusselator, n = 4, 16, 64, 256). Every configuration runs ROUNDS times
# (default 3), one process each, the order rotated every round; prints the
# median seconds and the ratio lanes / lockstep (> 1: lockstep faster).
#   sh bench/block_sweep.sh [build/bench]
set -eu
BIN=${1:-build/bench}
ROUNDS=${ROUNDS:-3}
BLOCKS="0 4096 1024 256 64 16"
T=$(mktemp)
trap 'rm -f "$T"' EXIT
med() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
secs() { sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'; }
for r in $(seq "$ROUNDS"); do
    for d in 0 2 4; do
        set -- lanes $BLOCKS
        i=0
        # rotate the order by the round number
        while [ $i -lt $((r % 7)) ]; do first=$1; shift; set -- "$@" "$first"; i=$((i + 1)); done
        for c in "$@"; do
            if [ "$c" = lanes ]; then
                s=$(RB_SPREAD_DECADES=$d "$BIN/lockstep_vs_lanes" lanes2 10000 1 | secs)
            elif [ "$c" = 0 ]; then
                s=$(RB_SPREAD_DECADES=$d "$BIN/lockstep_vs_lanes" lockstep 10000 1 0 1 | secs)
            else
                s=$(RB_SPREAD_DECADES=$d "$BIN/lockstep_vs_lanes" lockstep 10000 1 "$c" 2 | secs)
            fi
            echo "rob$d $c $s" >>"$T"
        done
    done
    for n in 4 16 64 256; do
        nb=$((16000 / n))
        for c in $BLOCKS; do
            [ "$c" = 0 ] && continue
            line=$("$BIN/lockstep_sizes" "$n" "$nb" "$c" 2)
            echo "bru$n lanes $(echo "$line" | sed -n 's/.*lanes_s=\([0-9.]*\).*/\1/p')" >>"$T"
            echo "bru$n 0 $(echo "$line" | sed -n 's/.*lockstep1_s=\([0-9.]*\).*/\1/p')" >>"$T"
            echo "bru$n $c $(echo "$line" | sed -n 's/.*blocks[0-9]*_s=\([0-9.]*\).*/\1/p')" >>"$T"
        done
    done
done
printf '| problem | lanes, 2 threads (s) |'
for c in $BLOCKS; do [ "$c" = 0 ] && printf ' one block, 1 thread |' || printf ' blocks of %s, 2 threads |' "$c"; done
printf '\n|---|---|'
for c in $BLOCKS; do printf -- '---|'; done
printf '\n'
for p in rob0 rob2 rob4 bru4 bru16 bru64 bru256; do
    lanes=$(awk -v p=$p '$1 == p && $2 == "lanes" { print $3 }' "$T" | med)
    printf '| %s | %s |' "$p" "$lanes"
    for c in $BLOCKS; do
        v=$(awk -v p=$p -v c=$c '$1 == p && $2 == c { print $3 }' "$T" | med)
        printf ' %s (%.2fx) |' "$v" "$(awk -v a="$lanes" -v b="$v" 'BEGIN { print (b > 0 ? a / b : 0) }')"
    done
    printf '\n'
done

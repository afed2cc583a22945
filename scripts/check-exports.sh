#!/bin/sh
# The dynamic symbols a shared library exports must be exactly the functions
# its public headers declare with OT_API: nothing private (ot__), nothing of
# the SUNDIALS it carries, and no declared function missing. A layer above
# the core (libodetensor_mpi, a binding) links against this list only.
#   sh scripts/check-exports.sh LIB HEADER...
set -eu
lib=$1
shift
tmp=${TMPDIR:-/tmp}/ot-exports.$$
trap 'rm -f "$tmp".decl "$tmp".have' EXIT
grep -h '^OT_API' "$@" | grep -o '^[^(]*(' |
    sed -E 's/.*[ *]([A-Za-z_0-9]+)\($/\1/' | sort -u >"$tmp".decl
nm -D --defined-only "$lib" | awk '{print $3}' | sort -u >"$tmp".have
extra=$(comm -13 "$tmp".decl "$tmp".have | tr '\n' ' ')
missing=$(comm -23 "$tmp".decl "$tmp".have | tr '\n' ' ')
if [ -n "$extra$missing" ]; then
    echo "exports of $lib: not declared with OT_API: ${extra:-none}; declared, not exported: ${missing:-none}" >&2
    exit 1
fi
echo "exports: $lib exports the $(wc -l <"$tmp".decl) OT_API functions of its headers, nothing else"

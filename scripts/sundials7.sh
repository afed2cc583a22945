#!/bin/sh
# Builds odetensor's own SUNDIALS, once, into DEST (default build/sundials-7):
# 7.1.1 from Debian's source archive (suite trixie, fetched by
# sundials-src.sh with a private apt list), Release (-O3), static and
# position-independent (so libodetensor.so can carry it), 64-bit indices,
# CVODES and ARKODE, and no logging (the library never prints). Debian's
# binary libsundials-dev is built without optimisation; this one is about
# 3x faster (BENCHMARKS.md). SUNDIALS' allocations go to odetensor's
# allocator (src/core/sun_memory.h: its objects are compiled with
# -Dmalloc=ot__sun_malloc and so on), so that memory running out inside
# SUNDIALS, which checks few of its mallocs, ends in OT_ERR_NOMEM and not in a
# crash; whatever links these libraries links that allocator too (the
# Makefile's libot_sun_memory.a). About 15 s on 2 cores; the log is
# DEST-build.log. A build made with other settings is rebuilt.
set -eu
dest=${1:-build/sundials-7}
config="7.1.1 Release static pic int64 cvodes+arkode nolog sun_memory"
if [ -f "$dest/.built" ] && [ "$(cat "$dest/.built")" = "$config" ]; then
    touch "$dest/.built" # newer than this script, which make compares it with
    exit 0
fi
alloc="-Dmalloc=ot__sun_malloc -Dcalloc=ot__sun_calloc -Drealloc=ot__sun_realloc -Dfree=ot__sun_free"
src=$(dirname "$dest")/sundials-src-trixie
sh "$(dirname "$0")/sundials-src.sh" "$src" trixie
log=$dest-build.log
bdir=$dest-build
rm -rf "$bdir" "$dest"
if ! { cmake -S "$src" -B "$bdir" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX="$PWD/$dest" -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_C_FLAGS="$alloc" \
        -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
        -DBUILD_CVODES=ON -DBUILD_ARKODE=ON -DBUILD_CVODE=OFF -DBUILD_IDA=OFF -DBUILD_IDAS=OFF \
        -DBUILD_KINSOL=OFF -DBUILD_FORTRAN_MODULE_INTERFACE=OFF -DENABLE_MPI=OFF \
        -DENABLE_OPENMP=OFF -DENABLE_PTHREAD=OFF -DEXAMPLES_ENABLE_C=OFF \
        -DEXAMPLES_ENABLE_CXX=OFF -DEXAMPLES_INSTALL=OFF -DSUNDIALS_INDEX_SIZE=64 \
        -DSUNDIALS_PRECISION=DOUBLE -DSUNDIALS_LOGGING_LEVEL=0 &&
      cmake --build "$bdir" -j "$(nproc)" &&
      cmake --install "$bdir"; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "sundials7.sh: building SUNDIALS 7 failed; the log is $log" >&2
    exit 1
fi
rm -rf "$bdir"
echo "$config" >"$dest/.built"
echo "sundials7.sh: SUNDIALS 7.1.1 (Release, static) in $dest" >&2

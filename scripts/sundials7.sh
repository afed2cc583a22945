#!/bin/sh
# Builds odetensor's own SUNDIALS, once, into DEST (default build/sundials-7):
# 7.1.1 from Debian's source archive (suite trixie, fetched by
# sundials-src.sh with a private apt list), Release (-O3), static and
# position-independent (so libodetensor.so can carry it), 64-bit indices,
# CVODES and ARKODE, and no logging (the library never prints). Debian's
# binary libsundials-dev is built without optimisation; this one is about
# 3x faster (BENCHMARKS.md). About 15 s on 2 cores; the log is DEST-build.log.
set -eu
dest=${1:-build/sundials-7}
[ -f "$dest/.built" ] && exit 0
src=$(dirname "$dest")/sundials-src-trixie
sh "$(dirname "$0")/sundials-src.sh" "$src" trixie
log=$dest-build.log
bdir=$dest-build
rm -rf "$bdir" "$dest"
if ! { cmake -S "$src" -B "$bdir" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX="$PWD/$dest" -DCMAKE_INSTALL_LIBDIR=lib \
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
touch "$dest/.built"
echo "sundials7.sh: SUNDIALS 7.1.1 (Release, static) in $dest" >&2

#!/bin/sh
# Builds SUNDIALS 7.1.1 for wasm32 with Debian's emscripten (3.1.6) from
# Debian's source (suite trixie, as the native build's scripts/sundials7.sh),
# once, and installs it into PREFIX (default build/sundials-wasm-7): static
# CVODES and ARKODE with the serial vector, dense matrix and linear solver, Newton and
# fixed-point nonlinear solvers; double precision, 32-bit indices (so no i64
# crosses the JS boundary), no logging. About 35 s on 2 cores.
# The emscripten quirks handled here are recorded in ../shared/BUILD-NOTES.md.
set -eu
prefix=${1:-build/sundials-wasm-7}
[ -f "$prefix/.built-arkode" ] && exit 0
if ! command -v emcmake >/dev/null 2>&1; then
    echo "sundials-wasm.sh: emcmake not found (sh scripts/deps.sh wasm installs emscripten)" >&2
    exit 1
fi
# emcc's optimizer needs Debian's node modules (acorn); its libc cache is
# prebuilt and frozen, so EM_CACHE must stay unset.
NODE_PATH=/usr/share/nodejs
export NODE_PATH
unset EM_CACHE
src=build/sundials-src-trixie
sh scripts/sundials-src.sh "$src" trixie
bdir=$prefix-build
rm -rf "$bdir"
# HAS_int32_t/int64_t: CMake's type-size probe cannot run wasm, so the sizes
# are seeded. The emulator: emcmake's default passes a flag node 20 refuses.
emcmake cmake -S "$src" -B "$bdir" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$PWD/$prefix" \
    "-DCMAKE_CROSSCOMPILING_EMULATOR=node;--no-experimental-fetch" \
    -DHAVE_HAS_int32_t=TRUE -DHAS_int32_t=4 -DHAVE_HAS_int64_t=TRUE -DHAS_int64_t=8 \
    -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON \
    -DBUILD_ARKODE=ON -DBUILD_CVODE=OFF -DBUILD_CVODES=ON -DBUILD_IDA=OFF -DBUILD_IDAS=OFF \
    -DBUILD_KINSOL=OFF -DBUILD_FORTRAN_MODULE_INTERFACE=OFF -DENABLE_MPI=OFF \
    -DENABLE_OPENMP=OFF -DENABLE_PTHREAD=OFF \
    -DEXAMPLES_ENABLE_C=OFF -DEXAMPLES_ENABLE_CXX=OFF -DEXAMPLES_INSTALL=OFF \
    -DSUNDIALS_INDEX_SIZE=32 -DSUNDIALS_PRECISION=DOUBLE -DSUNDIALS_LOGGING_LEVEL=0 \
    >"$bdir.log" 2>&1 || { tail -30 "$bdir.log" >&2; exit 1; }
cmake --build "$bdir" -j"$(nproc)" >>"$bdir.log" 2>&1 || { tail -30 "$bdir.log" >&2; exit 1; }
cmake --install "$bdir" >>"$bdir.log" 2>&1 || { tail -30 "$bdir.log" >&2; exit 1; }
touch "$prefix/.built-arkode"
echo "sundials-wasm.sh: SUNDIALS for wasm32 in $prefix" >&2

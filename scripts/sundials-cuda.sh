#!/bin/sh
# Builds SUNDIALS 7.1.1 (CVODES, serial and CUDA vectors) with nvcc from
# Debian's source (suite trixie: the version of odetensor's own native and
# wasm builds), once, and installs it into PREFIX (default
# build/sundials-cuda-7). Needs nvcc (CUDA 12/13) and cmake; no GPU is needed
# to build. CUDA_ARCH picks the GPU generation (default 90: H100/H200).
set -eu
prefix=${1:-build/sundials-cuda-7}
arch=${CUDA_ARCH:-90}
[ -f "$prefix/.built-arkode-$arch" ] && exit 0
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ ! -x "$nvcc" ]; then
    echo "sundials-cuda.sh: nvcc not found (set NVCC)" >&2
    exit 1
fi
src=build/sundials-src-trixie
sh scripts/sundials-src.sh "$src" trixie
bdir=$prefix-build
rm -rf "$bdir"
cmake -S "$src" -B "$bdir" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$PWD/$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
    -DCMAKE_CUDA_COMPILER="$nvcc" \
    -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DBUILD_ARKODE=ON -DBUILD_CVODE=OFF -DBUILD_CVODES=ON -DBUILD_IDA=OFF -DBUILD_IDAS=OFF \
    -DBUILD_KINSOL=OFF -DBUILD_FORTRAN_MODULE_INTERFACE=OFF -DENABLE_MPI=OFF \
    -DBUILD_SUNMATRIX_CUSPARSE=OFF -DBUILD_SUNLINSOL_CUSOLVERSP=OFF \
    -DEXAMPLES_ENABLE_C=OFF -DEXAMPLES_ENABLE_CXX=OFF -DEXAMPLES_ENABLE_CUDA=OFF \
    -DEXAMPLES_INSTALL=OFF -DSUNDIALS_INDEX_SIZE=64 -DSUNDIALS_PRECISION=DOUBLE \
    -DSUNDIALS_LOGGING_LEVEL=0 \
    >"$bdir.log" 2>&1 || { tail -30 "$bdir.log" >&2; exit 1; }
cmake --build "$bdir" -j"$(nproc)" >>"$bdir.log" 2>&1 || { tail -30 "$bdir.log" >&2; exit 1; }
cmake --install "$bdir" >>"$bdir.log" 2>&1
touch "$prefix/.built-arkode-$arch"
echo "sundials-cuda.sh: SUNDIALS 7.1.1 with NVECTOR_CUDA (sm_$arch) in $prefix" >&2

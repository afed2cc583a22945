#!/bin/sh
# Installs the Debian packages odetensor's build and tests need, once.
# Quiet when everything is present; as root it installs what is missing with
# apt-get, otherwise it prints the exact command and stops.
set -eu

# Usage: scripts/deps.sh [group...]; groups: build (default), check, lint, cuda, bench, wasm, npm, browser,
# valgrind, tsan, fuzz, mpi.
groups=${*:-build}
pkgs=""
for g in $groups; do
    case "$g" in
        # cmake and xz-utils build odetensor's own SUNDIALS 7 from Debian's
        # source (scripts/sundials7.sh); libsundials-dev is make SUNDIALS=system's.
        build) pkgs="$pkgs libsundials-dev libdlpack-dev pkg-config make gcc cmake xz-utils" ;;
        # python3-*: the Python package (bindings/python): build, pytest, the
        # offline pip install into a venv, numba's compiled callbacks, the
        # fitting example's figure.
        check) pkgs="$pkgs libsundials-dev libdlpack-dev pkg-config make gcc g++ cmake xz-utils check python3 python3-numpy python3-dev python3-setuptools python3-pytest python3-venv python3-numba python3-matplotlib" ;;
        lint)  pkgs="$pkgs cppcheck clang-format" ;;
        cuda)  pkgs="$pkgs cmake xz-utils libsundials-dev pkg-config make gcc g++ check" ;;
        bench) pkgs="$pkgs libsundials-dev pkg-config make gcc valgrind time python3 python3-numpy python3-scipy" ;;
        # Debian's emscripten 3.1.6 (clang 14, binaryen, node-acorn); cmake and
        # xz-utils build SUNDIALS for wasm32 from Debian's source; node runs the tests.
        wasm)  pkgs="$pkgs emscripten nodejs cmake xz-utils libdlpack-dev libsundials-dev pkg-config make gcc" ;;
        # Hardening (mk/hardening.mk): memcheck; clang for ThreadSanitizer;
        # clang 14 with its runtimes for libFuzzer + ASan/UBSan.
        valgrind) pkgs="$pkgs valgrind" ;;
        tsan)  pkgs="$pkgs clang libclang-rt-14-dev" ;;
        fuzz)  pkgs="$pkgs clang-14 libclang-rt-14-dev" ;;
        # Debian's Open MPI for the MPI layer (mk/mpi.mk): mpicc's flags, mpirun.
        mpi)   pkgs="$pkgs libopenmpi-dev openmpi-bin" ;;
        # npm for make bench-wasm (odex); only asked for when no npm is on PATH
        # (a nodejs from elsewhere, e.g. NodeSource, brings its own npm).
        npm)   pkgs="$pkgs npm" ;;
        # The demo page's test: Debian's Chromium driven by playwright-core
        # (from npm, pinned by bindings/wasm/package-lock.json); Liberation
        # fonts so the page's text renders on a bare machine.
        browser) pkgs="$pkgs chromium fonts-liberation" ;;
        *) echo "deps.sh: unknown group '$g' (known: build check lint cuda bench wasm npm browser valgrind tsan fuzz mpi)" >&2; exit 2 ;;
    esac
done

missing=""
for p in $pkgs; do
    case " $missing " in *" $p "*) continue ;; esac
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "odetensor needs these Debian packages:$missing" >&2
    echo "install them with:  sudo apt-get install -y$missing" >&2
    exit 1
fi
echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null

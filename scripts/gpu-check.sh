#!/bin/sh
# The GPU check: on a machine with an NVIDIA GPU, runs the CUDA tests, the
# GPU example and the GPU benchmark, then the kernel methods' compiled-model
# example and benchmark (bench/gpu_kernels.cu), and prints a summary with the
# GPU's lanes/s and the GPU / CPU ratios. Each step is capped (tests 180 s,
# examples 90 s, benchmarks 120 s: under 11 minutes in all; the steps
# usually take far less). Builds
# them first (make cuda) unless build/cuda holds all three, e.g. built on
# another machine and copied over. Output also lands in $LOG_DIR (default
# build/gpu-check). Exit status 0 only when every step passed and, on a
# machine that has a GPU, no step reported "skipped: no CUDA device" (a GPU
# the binaries cannot use is a failure there, not a skip).
set -u
cb=build/cuda
log=${LOG_DIR:-build/gpu-check}
mkdir -p "$log"
cuda_lib=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")/../lib64
export LD_LIBRARY_PATH="$cuda_lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ ! -x "$cb/tests/check_cuda" ] || [ ! -x "$cb/bench/gpu_robertson" ] ||
    [ ! -x "$cb/examples/robertson_gpu" ] || [ ! -x "$cb/examples/kernel_robertson" ] ||
    [ ! -x "$cb/bench/gpu_kernels" ]; then
    make cuda >"$log/build.log" 2>&1 || { tail -20 "$log/build.log"; exit 1; }
fi
have_gpu=0
if nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    have_gpu=1
    nvidia-smi -L
else
    echo "(no GPU listed by nvidia-smi)"
fi
status=0
step() { # name, seconds, command...
    name=$1
    cap=$2
    shift 2
    start=$(date +%s)
    timeout "$cap" "$@" >"$log/$name.log" 2>&1
    rc=$?
    echo "== $name: exit $rc, $(($(date +%s) - start)) s (cap $cap s)"
    cat "$log/$name.log"
    [ $rc -eq 0 ] || status=1
    if [ $have_gpu -eq 1 ] && grep -q "skipped: no CUDA device" "$log/$name.log"; then
        echo "== $name: FAILED: skipped on a machine with a GPU"
        status=1
    fi
}
step tests "${TESTS_CAP:-180}" "$cb/tests/check_cuda"
step example "${EXAMPLE_CAP:-90}" "$cb/examples/robertson_gpu" 100000
step bench "${BENCH_CAP:-120}" "$cb/bench/gpu_robertson" "${GPU_LANES:-1000000}" \
    "${CPU_LANES:-65536}"
# The kernel methods, a compiled model one lane a CUDA thread (issue 27).
step kernel_example "${EXAMPLE_CAP:-90}" "$cb/examples/kernel_robertson" 100000
step kernel_bench "${BENCH_CAP:-120}" "$cb/bench/gpu_kernels" "${GPU_LANES:-1000000}" \
    "${CPU_LANES:-65536}"
echo "== summary"
grep -h -E "^cuda: |skipped|lanes/s|GPU / CPU|own LU|bytes per lane|tolerance units|Robertson on CUDA|kernel_robertson|speedup_gpu" \
    "$log/tests.log" "$log/example.log" "$log/bench.log" "$log/kernel_example.log" \
    "$log/kernel_bench.log"
gpu=$(sed -n 's/^| CUDA lockstep, own block LU | [0-9]* | [0-9.]* | \([0-9]*\) |$/\1/p' "$log/bench.log")
ratio=$(sed -n 's/^GPU \/ CPU throughput: \([0-9.]*\)x.*/\1/p' "$log/bench.log")
echo "GPU lanes/s: ${gpu:-(none)}; GPU / CPU: ${ratio:-(none)}x"
[ $status -eq 0 ] && echo "gpu-check: PASSED" || echo "gpu-check: FAILED"
exit $status

#!/bin/sh
# The GPU check: on a machine with an NVIDIA GPU, runs the CUDA tests, the
# GPU example and the GPU benchmark, and prints a summary (under 5 minutes on
# an H200). Builds them first (make cuda) unless build/cuda holds them, e.g.
# built on another machine and copied over. Output also lands in $LOG_DIR
# (default build/gpu-check).
set -u
cb=build/cuda
log=${LOG_DIR:-build/gpu-check}
mkdir -p "$log"
cuda_lib=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")/../lib64
export LD_LIBRARY_PATH="$cuda_lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ ! -x "$cb/tests/check_cuda" ] || [ ! -x "$cb/bench/gpu_robertson" ]; then
    make cuda >"$log/build.log" 2>&1 || { tail -20 "$log/build.log"; exit 1; }
fi
nvidia-smi -L 2>/dev/null || echo "(nvidia-smi not found)"
status=0
step() { # name, command...
    name=$1
    shift
    start=$(date +%s)
    timeout "${STEP_TIMEOUT:-240}" "$@" >"$log/$name.log" 2>&1
    rc=$?
    echo "== $name: exit $rc, $(($(date +%s) - start)) s"
    cat "$log/$name.log"
    [ $rc -eq 0 ] || status=1
}
step tests "$cb/tests/check_cuda"
step example "$cb/examples/robertson_gpu" 100000
step bench "$cb/bench/gpu_robertson" "${GPU_LANES:-1000000}" "${CPU_LANES:-65536}"
echo "== summary"
grep -h -E "^cuda: |skipped|lanes/s\)|GPU / CPU|own LU|bytes per lane|tolerance units" \
    "$log/tests.log" "$log/example.log" "$log/bench.log"
exit $status

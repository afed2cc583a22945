"""The Python package on the Robertson benchmark (bench/robertson.h), side by
side in one run: odetensor from C, from Python with compiled callbacks
(numba cfunc rhs and Jacobian) and with a NumPy rhs, and SciPy's solve_ivp.

usage: PYTHONPATH=build/python/lib /usr/bin/python3 bench/python_robertson.py
           [--nbatch B] [--scipy-lanes N] [--rounds R] [--c build/bench/ot_robertson]

Every odetensor run solves the same B lanes (rates, times, BDF, rtol 1e-6,
atol 1e-8, 500 steps per interval, the analytic Jacobian where the run has
one), 1 thread unless named; SciPy solves the first N lanes one at a time.
The C program and the Python call with the same C callbacks through ctypes
(bindings/python/tests/models.c, the arithmetic of robertson.h) take the
same steps (printed), so their time ratio is the binding's overhead; rounds are
interleaved and the best of each is kept (this machine's speed drifts). Prints
seconds per lane and the ratio to C per line.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scipy_robertson as sr  # noqa: E402  (rates, times, SciPy's rhs and jac)

import odetensor as ot  # noqa: E402


def numba_callbacks():
    import numba
    from numba import types

    sig = types.int32(types.float64, types.CPointer(types.float64),
                      types.CPointer(types.float64), types.CPointer(types.float64),
                      types.int64, types.int64, types.voidptr)

    @numba.cfunc(sig, nopython=True, cache=False)
    def rhs(t, y, p, f, n, k, user):
        for b in range(k):
            y0, y1, y2 = y[3 * b], y[3 * b + 1], y[3 * b + 2]
            r1 = -p[3 * b] * y0 + p[3 * b + 1] * y1 * y2
            r3 = p[3 * b + 2] * y1 * y1
            f[3 * b] = r1
            f[3 * b + 1] = -r1 - r3
            f[3 * b + 2] = r3
        return 0

    @numba.cfunc(sig, nopython=True, cache=False)
    def jac(t, y, p, J, n, k, user):
        for b in range(k):
            y1, y2 = y[3 * b + 1], y[3 * b + 2]
            k1, k2, k3 = p[3 * b], p[3 * b + 1], p[3 * b + 2]
            o = 9 * b  # J[i + 3 j], column-major
            J[o + 0] = -k1
            J[o + 1] = k1
            J[o + 3] = k2 * y2
            J[o + 4] = -k2 * y2 - 2 * k3 * y1
            J[o + 5] = 2 * k3 * y1
            J[o + 6] = k2 * y1
            J[o + 7] = -k2 * y1
        return 0

    return rhs, jac


def numpy_rhs(t, y, p, f):
    r1 = -p[0] * y[0] + p[1] * y[1] * y[2]
    r3 = p[2] * y[1] * y[1]
    f[0] = r1
    f[1] = -r1 - r3
    f[2] = r3


def c_seconds(exe, nbatch, threads=1):
    out = subprocess.run([exe, str(nbatch), str(threads)], check=True, capture_output=True,
                         text=True).stdout
    fields = dict(kv.split("=", 1) for kv in out.split() if "=" in kv)
    return float(fields["seconds"]), int(fields["steps"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nbatch", type=int, default=2000)
    ap.add_argument("--scipy-lanes", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--c", default="build/bench/ot_robertson")
    ap.add_argument("--models", default="build/python/libmodels.so",
                    help="bindings/python/tests/models.c built (make python)")
    a = ap.parse_args()
    rates = np.asfortranarray(np.array(sr.make_rates(a.nbatch)).T)  # [3, nbatch]
    t_eval = sr.times()
    y0 = np.array([1.0, 0.0, 0.0])
    rhs, jac = numba_callbacks()
    common = dict(nstates=3, nparams=3, rtol=sr.RTOL, atol=sr.ATOL, max_steps=500)
    import ctypes
    lib = ctypes.CDLL(os.path.abspath(a.models))
    c_rhs = ot.FLAT_SIGNATURE(("robertson_rhs", lib))
    c_jac = ot.FLAT_SIGNATURE(("robertson_jac", lib))
    runs = {
        "python, C rhs+jac by ctypes, lanes": ot.Problem(rhs=c_rhs, jac=c_jac, mode="lanes",
                                                         threads=1, **common),
        "python, numba rhs+jac, lanes": ot.Problem(rhs=rhs, jac=jac, mode="lanes",
                                                   threads=1, **common),
        "python, numba rhs+jac, lanes, 2 threads": ot.Problem(
            rhs=rhs, jac=jac, mode="lanes", threads=2, **common),
        "python, numba rhs+jac, lockstep": ot.Problem(rhs=rhs, jac=jac, mode="lockstep",
                                                      threads=1, **common),
        "python, NumPy rhs, lockstep": ot.Problem(rhs=numpy_rhs, mode="lockstep",
                                                  threads=1, **common),
    }
    best = {name: float("inf") for name in ["C ot_robertson"] + list(runs)}
    steps = {}
    for _ in range(a.rounds):
        s, st = c_seconds(a.c, a.nbatch)
        best["C ot_robertson"] = min(best["C ot_robertson"], s)
        steps["C ot_robertson"] = st
        for name, prob in runs.items():
            t0 = time.perf_counter()
            r = ot.solve_dense(prob, y0, rates, t_eval)
            dt = time.perf_counter() - t0
            assert r.ok, r.message[:3]
            best[name] = min(best[name], dt)
            steps[name] = int(r.stats["steps"].sum())
    c = best["C ot_robertson"]
    print(f"Robertson, {a.nbatch} lanes, best of {a.rounds} interleaved rounds")
    for name, s in best.items():
        print(f"{name:44s} {1e3 * s / a.nbatch:9.4f} ms/lane  x{s / c:6.3f} of C  "
              f"steps {steps[name]}")
    k = [tuple(rates[:, b]) for b in range(a.scipy_lanes)]
    for method in ("LSODA", "BDF"):
        t0 = time.perf_counter()
        for kb in k:
            sr.run_ivp(method, kb, t_eval)
        s = (time.perf_counter() - t0) / a.scipy_lanes
        print(f"{'scipy solve_ivp ' + method + ' (per lane loop)':44s} {1e3 * s:9.4f} ms/lane  "
              f"x{s * a.nbatch / c:6.1f} of C")


if __name__ == "__main__":
    main()

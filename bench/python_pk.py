"""A dosed population from Python: the 2-compartment oral model of
examples/population_pk.c and bench/pk_scipy.py (the same splitmix64 patients:
14 doses each at their own times and amounts, 16-24 samples each), solved by
odetensor in one call (stops per lane, the dose added by a Python on_event),
against SciPy's LSODA restarted at each dose, patient by patient. Every run
is checked against the closed-form superposition (worst error in mg).

usage: PYTHONPATH=build/python/lib /usr/bin/python3 bench/python_pk.py
           [--patients P] [--scipy-patients S] [--rounds R]
"""
import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pk_scipy as pk  # noqa: E402  (the population, SciPy's loop, the closed form)

import odetensor as ot  # noqa: E402


def numpy_rhs(t, y, p, f):
    f[0] = -p[0] * y[0]
    f[1] = p[0] * y[0] - p[1] * y[1]


def numba_rhs():
    import numba
    from numba import types

    sig = types.int32(types.float64, types.CPointer(types.float64),
                      types.CPointer(types.float64), types.CPointer(types.float64),
                      types.int64, types.int64, types.voidptr)

    @numba.cfunc(sig)
    def rhs(t, y, p, f, n, k, user):
        for b in range(k):
            f[2 * b] = -p[2 * b] * y[2 * b]
            f[2 * b + 1] = p[2 * b] * y[2 * b] - p[2 * b + 1] * y[2 * b + 1]
        return 0

    return rhs


def inputs(pats):
    nb = len(pats)
    params = np.asfortranarray([[p[0] for p in pats], [p[1] for p in pats]])
    stops = np.asfortranarray(np.array([[d[0] for d in p[2]] for p in pats]).T)  # [14, nb]
    amounts = np.array([[d[1] for d in p[2]] for p in pats])  # [nb, 14]
    nt = max(len(p[3]) for p in pats)
    t_eval = np.full((nt, nb), np.nan)
    for b, p in enumerate(pats):
        t_eval[:len(p[3]), b] = p[3]
    return params, stops, amounts, np.asfortranarray(t_eval)


def worst_error(pats, r):
    worst = 0.0
    for b, (ka, ke, doses, times) in enumerate(pats):
        for i, t in enumerate(times):
            g, c = pk.exact(ka, ke, doses, t)
            worst = max(worst, abs(r.ys[0, i, b] - g), abs(r.ys[1, i, b] - c))
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--patients", type=int, default=1000)
    ap.add_argument("--scipy-patients", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    pats = pk.population(max(1000, a.patients))[:a.patients]
    params, stops, amounts, t_eval = inputs(pats)

    def on_event(t, root, y, p, lane):  # root -1 - k: the lane's stop k, its dose
        y[0] += amounts[lane, -1 - root]

    common = dict(nstates=2, nparams=2, on_event=on_event, rtol=1e-8, atol=1e-8)
    runs = {
        "odetensor, NumPy rhs, lockstep": ot.Problem(rhs=numpy_rhs, mode="lockstep", **common),
        "odetensor, numba rhs, lanes, 1 thread": ot.Problem(rhs=numba_rhs(), mode="lanes",
                                                           threads=1, **common),
        "odetensor, numba rhs, lanes, 2 threads": ot.Problem(rhs=numba_rhs(), mode="lanes",
                                                            threads=2, **common),
        "odetensor, numba rhs, lockstep": ot.Problem(rhs=numba_rhs(), mode="lockstep",
                                                    **common),
        "odetensor, numba rhs, lanes, 1 thread, adams": ot.Problem(
            rhs=numba_rhs(), mode="lanes", threads=1, method="adams", **common),
        "odetensor, numba rhs, lanes, 1 thread, dp54": ot.Problem(
            rhs=numba_rhs(), mode="lanes", threads=1, method="dp54", **common),
    }
    best = {name: math.inf for name in runs}
    worst = {}
    for _ in range(a.rounds):
        for name, prob in runs.items():
            t0 = time.perf_counter()
            r = ot.solve_dense_with(prob, np.zeros(2), params, t_eval, stops=stops)
            best[name] = min(best[name], time.perf_counter() - t0)
            assert r.ok, r.message[:2]
            worst[name] = worst_error(pats, r)
    scipy, sworst = {}, {}
    for method in ("LSODA", "BDF", "RK45"):
        t0 = time.perf_counter()
        sworst[method] = 0.0
        for ka, ke, doses, times in pats[:a.scipy_patients]:
            out = pk.solve_patient(ka, ke, doses, times, method)
            for t, col in out.items():
                g, c = pk.exact(ka, ke, doses, t)
                sworst[method] = max(sworst[method], abs(col[0] - g), abs(col[1] - c))
        scipy[method] = (time.perf_counter() - t0) / a.scipy_patients
    lsoda = scipy["LSODA"]
    print(f"dosed population: {a.patients} patients x {pk.ND} doses, best of {a.rounds}")
    for name, s in best.items():
        per = s / a.patients
        print(f"{name:46s} {1e6 * per:8.1f} us/patient  LSODA/this {lsoda / per:6.1f}  "
              f"worst error {worst[name]:.1e} mg")
    for method, per in scipy.items():
        print(f"{'scipy ' + method + ' restarted at each dose':46s} {1e6 * per:8.1f} us/patient"
              f"  LSODA/this {lsoda / per:6.1f}  worst error {sworst[method]:.1e} mg "
              f"({a.scipy_patients} patients)")


if __name__ == "__main__":
    main()

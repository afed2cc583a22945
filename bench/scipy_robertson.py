"""Robertson with SciPy on the lanes of bench/robertson.h, for comparison.

usage: /usr/bin/python3 bench/scipy_robertson.py [--lanes N] [--nbatch B]
           [--repeat R] [--reference ys.f64] [--exact E]

Solves the first N lanes (default 200) of the B-lane benchmark (default 10000)
with solve_ivp LSODA, solve_ivp BDF (analytic Jacobian, rtol 1e-6, atol 1e-8,
t_eval = the 50 output times) and odeint (LSODA, same Jacobian, tolerances and
times). Prints one line per method: seconds per lane (each method's whole loop
over the N lanes, divided by N; the best of --repeat loops), the total rhs
evaluations and, given --reference (the [3, 50, B] f64 dump of bench/ot_robertson), the
largest error of SciPy's answer against it, in units of the tolerance:
max |y_scipy - y_ot| / (atol + rtol |y_ot|) over all lanes, times and states.
Tolerances bound local errors only, so answers of two solvers differ by more
than one tolerance unit; --exact E also reports every method's (and
odetensor's) global error, in the same units, against Radau at rtol 1e-12,
atol 1e-16 on the first E lanes.
"""
import argparse
import sys
import time

import numpy as np
import scipy
from scipy.integrate import odeint, solve_ivp

N, NT, RTOL, ATOL, SEED = 3, 50, 1e-6, 1e-8, 20240503
MASK = (1 << 64) - 1


def splitmix64(state):
    """One step of splitmix64: (new state, output), as in robertson.h."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def make_rates(nbatch):
    """rates[b] = lane b's (k1, k2, k3), bit for bit as rb_make_rates()."""
    base = (0.04, 1e4, 3e7)
    rates, s = [], SEED
    for _ in range(nbatch):
        lane = []
        for i in range(N):
            s, z = splitmix64(s)
            u = float(z >> 11) * 2.0**-53
            lane.append(base[i] * (0.9 + 0.2 * u))
        rates.append(lane)
    return rates


def times():
    return np.array([10.0 ** (-5.0 + 10.0 * j / 49.0) for j in range(NT)])


def rhs(t, y, k1, k2, k3):
    r1 = -k1 * y[0] + k2 * y[1] * y[2]
    r3 = k3 * y[1] * y[1]
    return np.array([r1, -r1 - r3, r3])


def jac(t, y, k1, k2, k3):
    return np.array([[-k1, k2 * y[2], k2 * y[1]],
                     [k1, -k2 * y[2] - 2.0 * k3 * y[1], -k2 * y[1]],
                     [0.0, 2.0 * k3 * y[1], 0.0]])


def run_ivp(method, k, t_eval):
    sol = solve_ivp(rhs, (0.0, t_eval[-1]), [1.0, 0.0, 0.0], method=method,
                    t_eval=t_eval, args=tuple(k), jac=jac, rtol=RTOL, atol=ATOL)
    if sol.status != 0:
        raise RuntimeError(f"solve_ivp {method}: {sol.message}")
    return sol.y, sol.nfev


def run_odeint(k, t_eval):
    t = np.concatenate(([0.0], t_eval))
    y, info = odeint(rhs, [1.0, 0.0, 0.0], t, args=tuple(k), Dfun=jac, tfirst=True,
                     rtol=RTOL, atol=ATOL, mxstep=500, full_output=True)
    if info["message"] != "Integration successful.":
        raise RuntimeError("odeint: " + info["message"])
    return y[1:].T, int(info["nfe"][-1])


def tight(k, t_eval):
    sol = solve_ivp(rhs, (0.0, t_eval[-1]), [1.0, 0.0, 0.0], method="Radau",
                    t_eval=t_eval, args=tuple(k), jac=jac, rtol=1e-12, atol=1e-16)
    if sol.status != 0:
        raise RuntimeError("Radau reference: " + sol.message)
    return sol.y


def err_tol(y, ref):
    """Largest |y - ref| in units of atol + rtol |ref|."""
    return float((np.abs(y - ref) / (ATOL + RTOL * np.abs(ref))).max())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lanes", type=int, default=200)
    ap.add_argument("--nbatch", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--reference")
    ap.add_argument("--exact", type=int, default=0)
    a = ap.parse_args()
    rates = make_rates(a.nbatch)[: a.lanes]
    print(f"# scipy {scipy.__version__}, numpy {np.__version__}, python "
          f"{sys.version.split()[0]}, {a.lanes} of {a.nbatch} lanes")
    t_eval = times()
    ref = None
    if a.reference:
        ref = np.fromfile(a.reference, dtype="<f8").reshape(a.nbatch, NT, N)
    exact = [tight(k, t_eval) for k in rates[: a.exact]]
    if ref is not None and exact:
        worst = max(err_tol(ref[b].T, y) for b, y in enumerate(exact))
        print(f"odetensor lanes={len(exact)} err_exact_tol={worst:.3g}")
    methods = [
        ("scipy_ivp_lsoda", lambda k: run_ivp("LSODA", k, t_eval)),
        ("scipy_ivp_bdf", lambda k: run_ivp("BDF", k, t_eval)),
        ("scipy_odeint", lambda k: run_odeint(k, t_eval)),
    ]
    for name, solve in methods:
        best, nfev = float("inf"), 0
        for _ in range(a.repeat):
            ys, nfev = [], 0
            t0 = time.monotonic()
            for k in rates:
                y, w = solve(k)
                ys.append(y)
                nfev += w
            best = min(best, time.monotonic() - t0)
        line = f"{name} lanes={a.lanes} seconds_per_lane={best / a.lanes:.6e} nfev={nfev}"
        if ref is not None:  # ref[b].T: lane b as [3, 50]
            line += f" err_ot_tol={max(err_tol(y, ref[b].T) for b, y in enumerate(ys)):.3g}"
        if exact:
            line += f" err_exact_tol={max(err_tol(ys[b], y) for b, y in enumerate(exact)):.3g}"
        print(line)


if __name__ == "__main__":
    main()

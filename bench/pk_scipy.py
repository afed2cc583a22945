#!/usr/bin/python3
"""The population of examples/population_pk.c solved the way a SciPy user
would: per patient, one solve_ivp per dosing interval, restarted with the
dose added (issue 14's BENCHMARKS row). Same splitmix64 inputs, rtol 1e-8,
atol 1e-8, LSODA; checks each patient against the closed form and prints
the time per patient.
    /usr/bin/python3 bench/pk_scipy.py [patients=100]   (Debian's python3-scipy)"""
import math
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp

ND, NS = 14, 24
MASK = (1 << 64) - 1
state = 20261130


def uniform():
    global state
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return ((z ^ (z >> 31)) >> 11) / 9007199254740992.0


def population(nb):
    pats = []
    for _ in range(nb):
        ka = 1.0 * (0.7 + 0.6 * uniform())
        ke = 0.1 * (0.7 + 0.6 * uniform())
        doses = []
        for k in range(ND):
            doses.append((12.0 * k + 2.0 * uniform(), 100 * (0.8 + 0.4 * uniform())))
        ns = NS - int(8 * uniform())
        t = [170.0 * (i + uniform()) / ns if i < ns else math.nan for i in range(NS)]
        pats.append((ka, ke, doses, [x for x in t if not math.isnan(x)]))
    return pats


def solve_patient(ka, ke, doses, times, method="LSODA"):
    rhs = lambda t, y: [-ka * y[0], ka * y[0] - ke * y[1]]
    y = np.zeros(2)
    out = {}
    edges = [d[0] for d in doses] + [max(times[-1], doses[-1][0]) + 1e-9]
    t_start = 0.0
    for k, (td, amount) in enumerate(doses):
        if td > t_start:  # before the dose: integrate up to it
            ts = [x for x in times if t_start <= x < td]
            sol = solve_ivp(rhs, (t_start, td), y, method=method, rtol=1e-8, atol=1e-8,
                            t_eval=ts + [td])
            for x, col in zip(sol.t[:-1], sol.y.T[:-1]):
                out[x] = col
            y = sol.y[:, -1].copy()
        y[0] += amount
        t_start = td
    ts = [x for x in times if x >= t_start]
    if ts:
        sol = solve_ivp(rhs, (t_start, ts[-1]), y, method=method, rtol=1e-8, atol=1e-8,
                        t_eval=ts)
        for x, col in zip(sol.t, sol.y.T):
            out[x] = col
    return out


def exact(ka, ke, doses, t):
    gut = central = 0.0
    for td, amount in doses:
        if td <= t:
            tau = t - td
            gut += amount * math.exp(-ka * tau)
            central += amount * ka / (ka - ke) * (math.exp(-ke * tau) - math.exp(-ka * tau))
    return gut, central


def main():
    nb = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    pats = population(1000)[:nb]
    a = time.perf_counter()
    worst = 0.0
    for ka, ke, doses, times in pats:
        out = solve_patient(ka, ke, doses, times)
        for t, col in out.items():
            g, c = exact(ka, ke, doses, t)
            worst = max(worst, abs(col[0] - g) / 1000, abs(col[1] - c) / 1000)
    secs = time.perf_counter() - a
    print(f"scipy LSODA restarts: {nb} patients x {ND} doses in {secs:.3f} s "
          f"({1e6 * secs / nb:.0f} us a patient); worst error {worst:.1e} of 1000 mg")


if __name__ == "__main__":
    main()

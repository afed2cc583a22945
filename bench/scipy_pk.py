#!/usr/bin/python3
"""examples/data/pk_1000.csv the way a SciPy user simulates it (issue 26's
BENCHMARKS row): per subject a restart loop of scipy.integrate.solve_ivp
from one dose time to the next, boluses added to the state, infusion rates
switched between solves, steady state by repeating the dosing interval,
observations by t_eval. The parameters are the ones examples/population_doses
drew (its --params file), so both solve the very same problem; the result is
compared with odetensor's observations (its --obs file).

    build/examples/population_doses examples/data/pk_1000.csv build/demo \\
        --params build/demo/pk_params.csv --obs build/demo/pk_obs.csv
    /usr/bin/python3 bench/scipy_pk.py examples/data/pk_1000.csv \\
        build/demo/pk_params.csv build/demo/pk_obs.csv [--methods LSODA,BDF] [--subjects N]

The model: gut' = -ka gut + r_gut, central' = ka gut - CL/V central + r_central,
C = central / V; F and ALAG on CMT 1 (the gut), as the example's
ot_dose_model. rtol 1e-8, atol 1e-10 (odetensor's), no Jacobian (both sides
use difference quotients). Semantics as odetensor's dosing layer: a dose at
TIME is given at TIME + ALAG with F AMT; an infusion runs at RATE for F AMT /
RATE; an observation at a dose time sees the state before that dose, and at
a steady state's time the steady state (as odetensor shows it).

Steady state (SS 1), the rule: from the zero state, integrate one dosing
interval II with its dose (at ALAG into the interval) again and again, each
from the last one's end state, until the end states of two intervals differ
by at most the solver's tolerance in every component
(|y_k+1 - y_k| <= rtol |y_k+1| + atol), at most 1,000 intervals; the end
state replaces the state at TIME (running infusions end), then the record's
dose is given. Resets, modelled rates (RATE -1/-2), DUR, SS 2 and a
steady-state infusion that runs into the next interval are not handled
(none is in pk_1000.csv): such a subject is an error here."""
import math
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp

RTOL, ATOL = 1e-8, 1e-10
C_FLOOR = 1e-4  # mg/L: relative differences are of max(|C|, this), as the example's


def read_table(path):
    """A NONMEM-style CSV: '#' lines skipped, '.' or empty missing (NaN)."""
    rows, head = [], None
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            cells = [c.strip() for c in line.split(",")]
            if head is None:
                head = [c.upper() for c in cells]
                continue
            rows.append({h: (math.nan if c in (".", "") else float(c)) for h, c in zip(head, cells)})
    return rows


def by_subject(rows):
    subs, order = {}, []
    for r in rows:
        i = r["ID"]
        if i not in subs:
            subs[i] = []
            order.append(i)
        subs[i].append(r)
    return order, subs


def get(r, name, missing):
    v = r.get(name, math.nan)
    return missing if math.isnan(v) else v


def evid(r):
    e = r.get("EVID", math.nan)
    if not math.isnan(e):
        return int(e)
    return 1 if get(r, "AMT", 0) > 0 or get(r, "RATE", 0) != 0 else 0


class Subject:
    """One subject's restart loop for parameters q = (ka, CL, V, F, ALAG)."""

    def __init__(self, rows, q, method):
        self.rows, self.method = rows, method
        self.ka, self.ke, self.v, self.f, self.lag = q[0], q[1] / q[2], q[2], q[3], q[4]
        self.solves = 0

    def rhs(self, rates):
        ka, ke = self.ka, self.ke
        r0, r1 = rates
        return lambda t, y: [-ka * y[0] + r0, ka * y[0] - ke * y[1] + r1]

    def integrate(self, y, ta, tb, rates, t_eval):
        """y at tb from ta, and central at each t_eval in (ta, tb]."""
        self.solves += 1
        te = sorted(set(t_eval) | {tb})
        sol = solve_ivp(self.rhs(rates), (ta, tb), y, method=self.method, rtol=RTOL,
                        atol=ATOL, t_eval=te)
        if not sol.success:
            raise RuntimeError(f"solve_ivp from {ta} to {tb}: {sol.message}")
        return sol.y[:, -1].copy(), dict(zip(sol.t, sol.y[1]))

    def dose_ops(self, t, amt, rate, cmt, did):
        """A dose's (effective time, kind, compartment, value, dose id)."""
        c = int(cmt) - 1
        lag = self.lag if c == 0 else 0.0
        fa = (self.f if c == 0 else 1.0) * amt
        if rate > 0:
            return [(t + lag, "on", c, rate, did), (t + lag + fa / rate, "off", c, rate, did)]
        return [(t + lag, "bolus", c, fa, did)]

    def steady_state(self, ii, amt, rate, cmt):
        """The state at a steady-state dose's time (the rule in the header)."""
        ops = sorted(self.dose_ops(0.0, amt, rate, cmt, 0))
        if ops[-1][0] > ii:
            raise NotImplementedError("a steady-state dose that runs into the next interval")
        y = np.zeros(2)
        for _ in range(1000):
            y_old, t, rates = y.copy(), 0.0, [0.0, 0.0]
            for tb, kind, c, val, _ in ops + [(ii, "end", 0, 0.0, 0)]:
                if tb > t:
                    y, _ = self.integrate(y, t, tb, rates, [])
                    t = tb
                if kind == "bolus":
                    y[c] += val
                elif kind == "on":
                    rates[c] += val
                elif kind == "off":
                    rates[c] -= val
            if np.all(np.abs(y - y_old) <= RTOL * np.abs(y) + ATOL):
                return y
        raise RuntimeError("no steady state within 1,000 intervals")

    def run(self):
        """C at each observation, in record order."""
        ops, obs = [], []  # ops: (time, seq, kind, cmt, value, dose id)
        for seq, r in enumerate(self.rows):
            e, t = evid(r), r["TIME"]
            if e == 0:
                if get(r, "MDV", 0) != 1:
                    obs.append(t)
                continue
            if e != 1 or get(r, "RATE", 0) < 0 or get(r, "SS", 0) == 2 or "DUR" in r:
                raise NotImplementedError(f"ID {r['ID']:g} at {t}: not in this script")
            amt, rate, cmt = get(r, "AMT", 0), get(r, "RATE", 0), get(r, "CMT", 1)
            ii, addl = get(r, "II", 0), int(get(r, "ADDL", 0))
            if get(r, "SS", 0) == 1:
                ops.append((t, seq, "ss", 0, (ii, amt, rate, cmt), -1))
            for k in range(addl + 1):
                for te, kind, c, val, did in self.dose_ops(t + k * ii, amt, rate, cmt, len(ops)):
                    ops.append((te, seq, kind, c, val, did))
        ops.sort(key=lambda o: (o[0], o[1]))
        y, t, rates, got = np.zeros(2), 0.0, [0.0, 0.0], {}
        ss_times = {o[0] for o in ops if o[2] == "ss"}
        if all(o[0] > 0 for o in ops):  # observations at 0 before any dose
            got.update({x: 0.0 for x in obs if x == 0})
        running = set()  # infusions on; an SS 1 ends them, and their ends are dropped
        for tb, _, kind, c, val, did in ops + [(max(obs), 1 << 60, "end", 0, 0, -1)]:
            if tb > t:  # observations in (t, tb); those at tb below
                want = [x for x in obs if t < x < tb]
                y, seen = self.integrate(y, t, tb, rates, want)
                got.update({x: seen[x] for x in want})
                t = tb
            if kind == "ss":
                y = self.steady_state(*val)
                running, rates = set(), [0.0, 0.0]
            # at a dose time: before the doses there, or at a steady state's
            # time its state (odetensor's trough at steady state)
            if kind == "ss" or t not in ss_times:
                got.update({x: y[1] for x in obs if x == t and x not in got})
            if kind == "bolus":
                y[c] += val
            elif kind == "on":
                running.add(did)
                rates[c] += val
            elif kind == "off" and did in running:
                running.discard(did)
                rates[c] -= val
        return [got[x] / self.v for x in obs]


def main():
    args = [a for a in sys.argv[1:]]
    methods, limit = ["LSODA", "BDF"], None
    if "--methods" in args:
        k = args.index("--methods")
        methods = args[k + 1].split(",")
        del args[k:k + 2]
    if "--subjects" in args:
        k = args.index("--subjects")
        limit = int(args[k + 1])
        del args[k:k + 2]
    if len(args) != 3:
        sys.exit(__doc__)
    order, subs = by_subject(read_table(args[0]))
    params = {r["ID"]: [r["KA"], r["CL"], r["V"], r["F"], r["ALAG"]] for r in read_table(args[1])}
    ot_order, ot_obs = by_subject(read_table(args[2]))
    order = order[:limit] if limit else order
    print(f"{len(order)} subjects of {args[0]}, rtol {RTOL:g}, atol {ATOL:g}")
    for method in methods:
        worst, where, solves = 0.0, None, 0
        t0 = time.perf_counter()
        results = {}
        for i in order:
            s = Subject(subs[i], params[i], method)
            results[i] = s.run()
            solves += s.solves
        secs = time.perf_counter() - t0
        for i in order:
            mine = [r["C"] for r in ot_obs[i]]
            if len(mine) != len(results[i]):
                sys.exit(f"ID {i:g}: {len(results[i])} observations here, {len(mine)} in {args[2]}")
            for j, (a, b) in enumerate(zip(results[i], mine)):
                d = abs(a - b) / max(abs(b), C_FLOOR)
                if d > worst:
                    worst, where = d, (i, ot_obs[i][j]["TIME"])
        print(f"  scipy {method:6s} {secs:8.2f} s ({1e3 * secs / len(order):.2f} ms a subject, "
              f"{solves} solve_ivp calls); largest relative difference from odetensor "
              f"{worst:.2e} (ID {where[0]:g}, t {where[1]:g})")


if __name__ == "__main__":
    main()

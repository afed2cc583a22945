#!/usr/bin/python3
"""Measures the Rosenbrock tables of src/kernel/ros_tables.c: parses the
committed numbers (not a copy), steps them exactly as src/kernel/tables.h's
formula says, and checks each method's orders (y1, embedded, err, dense),
its stiff behaviour and its order conditions. Prints a table; exits nonzero
on any failure.   usage: /usr/bin/python3 tools/check_ros_tables.py [FILE.c]"""
import math
import os
import sys

import numpy as np

from c_tables import pad, parse_tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "src", "kernel", "ros_tables.c")
NS = 8  # OT__ROS_MAX_STAGES
TOL = 0.2  # on a measured slope
# Errors below these are roundoff (the 16-digit coefficients satisfy their
# order conditions to ~1e-14), not truncation: a slope stops there.
FLOOR_GLOBAL = 1e-12
FLOOR_LOCAL = 1e-13


class Table:
    def __init__(self, raw):
        s = self.s = raw["stages"]
        self.name, self.g = raw["name"], raw["gamma"]
        self.p, self.pe, self.pd = raw["order"], raw["embedded_order"], raw["dense_order"]
        self.alpha = np.array(pad(raw["alpha"], NS))[:s]
        self.d = np.array(pad(raw["d"], NS))[:s]
        self.a = np.array([pad(r, NS) for r in pad2(raw["a"])])[:s, :s]
        self.c = np.array([pad(r, NS) for r in pad2(raw["c"])])[:s, :s]
        self.m = np.array(pad(raw["m"], NS))[:s]
        self.e = np.array(pad(raw["e"], NS))[:s]
        self.nd = raw["ndense"]
        self.D = np.array([pad(r, NS) for r in raw["dense"]])[:self.nd, :s]


def pad2(rows):
    return list(rows) + [[0.0]] * (NS - len(rows))


def step(T, f, jac, ft, t0, y0, h, jscale=1.0):
    """One step of tables.h's formula; returns y1, err, and the dense
    output as a function of theta."""
    n = len(y0)
    W = np.eye(n) / (h * T.g) - jscale * jac(t0, y0)
    fT = ft(t0, y0)
    k = []
    for i in range(T.s):
        Y = y0 + sum(T.a[i, j] * k[j] for j in range(i))
        rhs = f(t0 + T.alpha[i] * h, Y) + h * T.d[i] * fT
        rhs = rhs + sum(T.c[i, j] / h * k[j] for j in range(i))
        k.append(np.linalg.solve(W, rhs))
    K = np.array(k)
    y1 = y0 + T.m @ K
    err = T.e @ K
    Dr = T.D @ K

    def dense(th):
        poly = sum(th ** r * Dr[r] for r in range(T.nd))
        return (1 - th) * y0 + th * (y1 + (1 - th) * poly)
    return y1, err, dense


# The test problem: y' = g(y) + r(t), nonlinear g, forcing r built so the
# exact solution is Y(t) below; f_t = r'(t) is far from zero.
def Y(t):
    return np.array([math.cos(t) + 0.5 * t, math.exp(-t) + math.sin(t)])


def Yp(t):
    return np.array([-math.sin(t) + 0.5, -math.exp(-t) + math.cos(t)])


def Ypp(t):
    return np.array([-math.cos(t), math.exp(-t) - math.sin(t)])


# Its Jacobian's eigenvalues stay O(1): in a stiffer one the step sizes
# that still show a clean slope sit on the roundoff floor.
def g(y):
    return np.array([-y[0] * y[1] + 0.5 * y[1], math.sin(y[0]) - 0.5 * y[1] ** 2])


def gJ(y):
    return np.array([[-y[1], 0.5 - y[0]], [math.cos(y[0]), -y[1]]])


def f(t, y):
    return g(y) + Yp(t) - g(Y(t))


def jac(t, y):
    return gJ(y)


def ft(t, y):
    return Ypp(t) - gJ(Y(t)) @ Yp(t)


def integrate(T, N, t_end, embedded=False, jscale=1.0):
    """Max error over the step points: at one point the leading error term
    can pass through zero and fake a slope."""
    h, y, t, worst = t_end / N, Y(0.0), 0.0, 0.0
    for _ in range(N):
        y1, err, _ = step(T, f, jac, ft, t, y, h, jscale)
        y = y1 - err if embedded else y1
        t += h
        worst = max(worst, np.max(np.abs(y - Y(t))))
    return worst


def slopes(hs, errs, floor=FLOOR_GLOBAL):
    out = []
    for i in range(len(hs) - 1):
        if errs[i + 1] < floor or errs[i] < floor:
            break
        out.append(math.log(errs[i] / errs[i + 1]) / math.log(hs[i] / hs[i + 1]))
    return out


RESULTS = []


def verdict(method, what, sl, want):
    """The last three usable slopes (the asymptotic ones) must be within TOL
    of `want`."""
    tail = sl[-3:]
    ok = len(tail) >= 2 and all(abs(x - want) <= TOL for x in tail)
    RESULTS.append((method, what, want, sl, ok))
    return ok


def conv_checks(T):
    Ns = [2, 4, 8, 16, 32, 64, 128]
    hs = [2.0 / N for N in Ns]
    e = [integrate(T, N, 2.0) for N in Ns]
    verdict(T.name, "y1 global", slopes(hs, e), T.p)
    e = [integrate(T, N, 2.0, embedded=True) for N in Ns]
    verdict(T.name, "y1-err global", slopes(hs, e), T.pe)
    if T.name == "ros23":  # a W method: y1 keeps order 2 with a wrong J
        e = [integrate(T, N, 2.0, jscale=0.5) for N in Ns]
        verdict(T.name, "y1 global, J/2", slopes(hs, e), T.p)
    # One step from the exact solution (the worst of a few starting
    # points): local errors.
    hs = [0.8 / 2 ** k for k in range(9)]
    loc, est = [0.0] * len(hs), [0.0] * len(hs)
    dense_loc = {th: [0.0] * len(hs) for th in (0.3, 0.5, 0.8)}
    for t0 in (0.1, 0.4, 0.9, 1.3):
        for q, h in enumerate(hs):
            y1, err, dense = step(T, f, jac, ft, t0, Y(t0), h)
            loc[q] = max(loc[q], np.max(np.abs(y1 - Y(t0 + h))))
            est[q] = max(est[q], np.max(np.abs(err)))
            for th, v in dense_loc.items():
                v[q] = max(v[q], np.max(np.abs(dense(th) - Y(t0 + th * h))))
    verdict(T.name, "y1 local", slopes(hs, loc, FLOOR_LOCAL), T.p + 1)
    verdict(T.name, "|err| local", slopes(hs, est, FLOOR_LOCAL), min(T.p, T.pe) + 1)
    for th, v in dense_loc.items():
        verdict(T.name, "dense local th=%.1f" % th, slopes(hs, v, FLOOR_LOCAL), T.pd + 1)
    # Global error at fixed points inside a step (n steps of h, then theta
    # into the next), the worst of three such points: the propagated y_n
    # error (order p) plus the dense local one (dense_order + 1).
    for th in (0.3, 0.5, 0.8):
        hs, e = [], []
        for n in (2, 4, 8, 16, 32, 64, 128):
            worst = 0.0
            for tstar in (0.7, 1.3, 1.9):
                h = tstar / (n + th)
                y, t = Y(0.0), 0.0
                for _ in range(n):
                    y, _, _ = step(T, f, jac, ft, t, y, h)
                    t += h
                _, _, dense = step(T, f, jac, ft, t, y, h)
                worst = max(worst, np.max(np.abs(dense(th) - Y(tstar))))
            hs.append(1.0 / (n + th))
            e.append(worst)
        verdict(T.name, "dense global th=%.1f" % th, slopes(hs, e),
                min(T.p, T.pd + 1))


def stiffly_accurate(T):
    """y1 is the last stage's argument plus its k, that stage at t0 + h."""
    last = np.eye(T.s)[T.s - 1]
    return T.alpha[-1] == 1.0 and np.array_equal(T.m, T.a[-1] + last)


def stiff_check(T, lam=1e6, h=0.1, n=20):
    """y' = -lam (y - cos t) at h lam = 1e5, started on the slow solution
    (y0 = 1) and off it (y0 = 0, a unit transient that the exact solution
    loses by t = 1e-5). L-stability: what is left of the transient after
    one step is |R(-h lam)| ~ 1/(h lam), after two its square. Accuracy on
    the slow solution: stiffly accurate methods keep their nonstiff error
    level; ros23 (not stiffly accurate) keeps its order-2 one."""
    fs = lambda t, y: np.array([-lam * (y[0] - math.cos(t))])
    js = lambda t, y: np.array([[-lam]])
    ts = lambda t, y: np.array([-lam * math.sin(t)])

    def run(y0):
        y, t, out = np.array([y0]), 0.0, []
        for _ in range(n):
            y, _, _ = step(T, fs, js, ts, t, y, h)
            t += h
            out.append(y[0])
        return np.array(out)
    ts_ = h * np.arange(1, n + 1)
    slow = (lam * lam * np.cos(ts_) + lam * np.sin(ts_)) / (lam * lam + 1)
    on, off = run(1.0), run(0.0)
    err = np.max(np.abs(on - slow))
    left1, left2 = abs(off[0] - on[0]), np.max(np.abs(off[1:] - on[1:]))
    tol = 1e-6 if stiffly_accurate(T) else 1e-2
    ok = err < tol and left1 < 1e-3 and left2 < 1e-6
    RESULTS.append((T.name, "stiff: err, R, R^2", None, [err, left1, left2], ok))


def trees(order):
    """Rooted trees with `order` vertices, each a sorted tuple of subtrees:
    every tree of order - 1 with a leaf added at each of its vertices."""
    if order == 1:
        return [()]

    def canon(t):
        return tuple(sorted(canon(ch) for ch in t))

    def grow(t):
        yield t + ((),)
        for i, ch in enumerate(t):
            for g2 in grow(ch):
                yield t[:i] + (g2,) + t[i + 1:]
    return sorted({canon(x) for t in trees(order - 1) for x in grow(t)})


def order_checks(T):
    """Back to the untransformed form (Gamma = (I/gamma - C)^-1, alpha =
    a Gamma, b = m Gamma, B = alpha + Gamma), where tree t's condition is
    b . Phi(t) = theta^rho(t) / gamma(t): edges use B from a vertex with
    one son (f' and the W term) and alpha from one with more (f'', ...)."""
    s = T.s
    Gam = np.linalg.inv(np.eye(s) / T.g - T.c)
    al = T.a @ Gam
    B = al + Gam
    bad = []
    bad += [("alpha vs row sums of a Gamma", np.max(np.abs(al.sum(1) - T.alpha)))]
    bad += [("d vs row sums of Gamma", np.max(np.abs(Gam.sum(1) - T.d)))]

    def phi(t):
        v = np.ones(s)
        E = B if len(t) == 1 else al
        for ch in t:
            v = v * (E @ phi(ch))
        return v

    def dens(t):
        return len_t(t) * math.prod(dens(ch) for ch in t)

    def len_t(t):
        return 1 + sum(len_t(ch) for ch in t)
    b, bh = T.m @ Gam, (T.m - T.e) @ Gam
    wts = [("b", b, T.p, 1.0), ("b_emb", bh, T.pe, 1.0)]
    for th in (0.3, 0.5, 0.8):
        bt = th * b + th * (1 - th) * sum(th ** r * (T.D[r] @ Gam) for r in range(T.nd))
        wts.append(("b(th=%.1f)" % th, bt, T.pd, th))
    for nm, w, p, th in wts:
        res = max(abs(w @ phi(t) - th ** len_t(t) / dens(t))
                  for q in range(1, p + 1) for t in trees(q))
        bad.append(("%s to order %d" % (nm, p), res))
    worst = max(r for _, r in bad)
    RESULTS.append((T.name, "order conditions", None, [worst], worst < 1e-11))
    return bad


def main():
    tabs = parse_tables(SRC, "ot__ros_table")
    want = ["ot__kernel_rodas4", "ot__kernel_rodas5p", "ot__kernel_ros23"]
    missing = [w for w in want if w not in tabs]
    if missing:
        print("missing tables:", missing)
        return 1
    for w in want:
        T = Table(tabs[w])
        for nm, r in order_checks(T):
            print("  %-10s %-34s residual %.2e" % (T.name, nm, r))
        conv_checks(T)
        stiff_check(T)
    # "slope" is the one expected: the order for global errors, order + 1
    # for one step's (local) errors.
    print("\n%-8s %-22s %-6s %-6s %s" % ("method", "check", "slope", "ok",
                                        "measured slopes (h halving) / values"))
    fails = 0
    for meth, what, w, sl, ok in RESULTS:
        fails += not ok
        ws = "-" if w is None else str(w)
        print("%-8s %-22s %-6s %-6s %s" % (meth, what, ws, "ok" if ok else "FAIL",
                                            " ".join("%.2f" % x if w is not None else "%.2e" % x
                                                     for x in sl)))
    print("\n%d checks, %d failed" % (len(RESULTS), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

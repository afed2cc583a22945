#!/usr/bin/python3
"""Writes examples/data/pk_1000.csv: a NONMEM-style dataset of 1,000 subjects
for examples/population_doses.c (issue 26). Standard library only and a fixed
seed, so the file is the same on every run:
    /usr/bin/python3 examples/data/make_pk_1000.py [out=examples/data/pk_1000.csv]

The model: one compartment with first-order absorption, CMT 1 gut, CMT 2
central; times in h, amounts in mg, volumes in L, DV a concentration in mg/L.
Regimens (each subject one of them):
  oral       AMT 100-400 mg into CMT 1 every 12 h (II 12, ADDL 5)      ~72 %
  oral SS    the same with SS 1 on the first dose (at steady state)    ~10 %
  infusion   a 0.5-2 h infusion into CMT 2 (RATE = AMT / duration)
             every 12 h, a quarter of them with SS 1                    ~10 %
  two        oral as above, then from 72 h another amount (ADDL 3)     ~8 %
Observations: about 12 per subject at its own times (jittered nominal
times), one of them a trough exactly at a dose time (12 h; the second
regimen's subjects at 72 h and 84 h too). DV is simulated from the model
(the superposition of one-dose solutions, steady state as the sum over the
doses of all earlier intervals) with this script's own parameters and 10 %
proportional plus 0.005 mg/L additive noise: it is data, the example does
not fit it."""
import math
import random
import sys

SEED = 20261207
NSUB = 1000
II = 12.0


def central(t, doses, ka, ke):
    """Central amount at t from doses (start, amount, rate, cmt); rate 0 is
    a bolus (an oral one into the gut), rate > 0 an infusion into central."""
    a = 0.0
    for s, amt, rate, cmt in doses:
        tau = t - s
        if tau <= 0:
            continue
        if rate > 0:
            d = amt / rate
            a += rate / ke * (1 - math.exp(-ke * min(tau, d))) * math.exp(-ke * max(tau - d, 0))
        elif cmt == 1:
            a += amt * ka / (ka - ke) * (math.exp(-ke * tau) - math.exp(-ka * tau))
        else:
            a += amt * math.exp(-ke * tau)
    return a


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "examples/data/pk_1000.csv"
    rng = random.Random(SEED)
    lines = [
        "# pk_1000: 1,000 subjects, NONMEM-style, for examples/population_doses.c;",
        "# written by examples/data/make_pk_1000.py (fixed seed; do not edit by hand).",
        "# One-compartment oral model: CMT 1 gut, CMT 2 central; h, mg, L; DV in mg/L.",
        "# Oral every 12 h (some at steady state, SS 1), 0.5-2 h infusions into CMT 2,",
        "# some a second regimen from 72 h; WT (kg) a covariate.",
        "ID,TIME,EVID,AMT,RATE,CMT,II,ADDL,SS,DV,MDV,WT",
    ]
    for sid in range(1, NSUB + 1):
        wt = round(rng.uniform(50, 110), 1)
        ka = 1.0 * math.exp(rng.gauss(0, 0.3))
        cl = 5.0 * (wt / 70) ** 0.75 * math.exp(rng.gauss(0, 0.25))
        v = 50.0 * (wt / 70) * math.exp(rng.gauss(0, 0.2))
        f, lag, ke = 0.8, 0.25 * math.exp(rng.gauss(0, 0.3)), cl / v
        u = rng.random()
        kind = "oral" if u < 0.72 else "ss" if u < 0.82 else "inf" if u < 0.92 else "two"
        amt = rng.choice((100, 150, 200, 250, 300, 400))
        ss = 1 if kind == "ss" or (kind == "inf" and rng.random() < 0.25) else 0
        recs = []  # (TIME, AMT, RATE, CMT, ADDL)
        if kind == "inf":
            dur = rng.choice((0.5, 1.0, 2.0))
            recs.append((0.0, amt, amt / dur, 2, 5))
        else:
            recs.append((0.0, amt, 0.0, 1, 5))
        if kind == "two":
            recs.append((72.0, rng.choice([a for a in (100, 200, 300, 400) if a != amt]), 0.0, 1, 3))
        # every dose the model sees: (effective start, amount, rate, cmt)
        doses = []
        for t0, a, rate, cmt, addl in recs:
            lg = lag if cmt == 1 else 0.0
            fa = f * a if cmt == 1 else a
            ks = range(-int(math.ceil(42 / (min(ka, ke) * II))), 0) if ss and t0 == 0 else ()
            for k in list(ks) + list(range(addl + 1)):
                doses.append((t0 + k * II + lg, fa, rate, cmt))
        # the sampling times: jittered after each dose, troughs exact
        jit = lambda base, dt: round(base + dt * math.exp(rng.gauss(0, 0.12)), 2)
        obs = [jit(0, dt) for dt in (0.5, 1, 2, 4, 8)] + [12.0]
        if kind == "two":
            obs += [jit(60, dt) for dt in (1, 4)] + [72.0]
            obs += [jit(72, dt) for dt in (1, 2, 4)] + [84.0]
            obs += [jit(108, dt) for dt in (1, 4, 12)]
        else:
            obs += [jit(60, dt) for dt in (0.5, 1.5, 3, 6, 12, 24)]
        obs.sort()
        rows = [(t0, 0, (t0, a, rate, cmt, addl)) for t0, a, rate, cmt, addl in recs]
        rows += [(t, 1, None) for t in obs]
        rows.sort(key=lambda r: (r[0], r[1]))  # doses first at equal times
        for t, is_obs, rec in rows:
            if is_obs:
                c = central(t, doses, ka, ke) / v
                dv = c * (1 + 0.1 * rng.gauss(0, 1)) + 0.005 * rng.gauss(0, 1)
                lines.append(f"{sid},{t:g},0,.,.,2,.,.,.,{max(dv, 0.0):.4g},0,{wt:g}")
            else:
                _, a, rate, cmt, addl = rec
                r = f"{rate:g}" if rate > 0 else "0"
                s = ss if t == 0 else 0
                lines.append(f"{sid},{t:g},1,{a},{r},{cmt},{II:g},{addl},{s},.,1,{wt:g}")
    with open(out, "w", newline="\n") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

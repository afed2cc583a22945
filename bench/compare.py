"""Compares two [3, 50, nbatch] f64 output dumps of the bench programs.

usage: /usr/bin/python3 bench/compare.py A.f64 B.f64 [max_rel]

Prints how many outputs are bitwise equal and the largest relative difference
|a - b| / max(|a|, |b|) (0 where both are 0); exits 1 when that exceeds max_rel
(default 1e-12) or the files differ in size or hold NaN.
"""
import sys

import numpy as np


def main():
    a = np.fromfile(sys.argv[1], dtype="<f8")
    b = np.fromfile(sys.argv[2], dtype="<f8")
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-12
    if a.size != b.size or a.size == 0:
        print(f"compare: sizes differ ({a.size} vs {b.size})")
        return 1
    if np.isnan(a).any() or np.isnan(b).any():
        print("compare: NaN in the outputs (a lane failed)")
        return 1
    same = int(np.count_nonzero(a.view("<u8") == b.view("<u8")))
    scale = np.maximum(np.abs(a), np.abs(b))
    rel = np.divide(np.abs(a - b), scale, out=np.zeros_like(a), where=scale > 0)
    worst = float(rel.max())
    print(f"compare bitwise_equal={same}/{a.size} max_rel_diff={worst:.3g}")
    return 0 if worst <= limit else 1


if __name__ == "__main__":
    sys.exit(main())

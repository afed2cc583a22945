#!/usr/bin/env python3
"""Projects the MPI solve's phases from this machine to 64 nodes.

Usage: bench/mpi/project.py RESULTS [lanes] [nt]
RESULTS is the output of `make bench-mpi` (mpi_scaling's key=value lines):
per_lane_us (one lane on one core, measured), and the ping-pong one-way
times (measured here, shared memory). The network between nodes is not
measured here; two common ones are assumed and named in the table.

The model follows src/mpi/ step by step (message sizes per lane and per
block from mpi_impl.h and mpi_collect.c):
  inputs   LOCAL style: every lane's f64 inputs (in_w = n + np doubles) go to
           the root: N * 8 in_w bytes into one link.
  deal     the root sends each block's inputs (8 B header + 8 in_w B a lane)
           and takes one 8 B request per block; it serves requests between
           its own lanes, each costing t_req of its time.
  solve    N * per_lane / ranks, if the dealer keeps up.
  outputs  a lane is a 120 B head + rows * nt * 8 B; distributed, each rank
           sends what it solved to the owners (all-to-all, spread over all
           links); gathered, N records into the root's one link.
"""
import re
import sys

HEAD = 120  # bytes: ot__mpi_lane_head (static_assert'ed multiple of 8)


def measured(path):
    text = open(path).read()
    lane_us = float(re.search(r"per_lane_us=([\d.]+)", text).group(1))
    # CPU seconds of the one-process rounds, when printed: other jobs on the
    # machine inflate wall time, not the work a lane takes.
    cpu = sorted(float(c) for c in re.findall(r"alone [\d.]+ \(([\d.]+)\)", text))
    lanes = re.search(r"scaling lanes=(\d+)", text)
    if cpu and lanes:
        lane_us = 1e6 * cpu[len(cpu) // 2] / int(lanes.group(1))
    pp = {int(b): float(t) for b, t in re.findall(r"bytes=(\d+) one_way_us=([\d.]+)", text)}
    return lane_us * 1e-6, pp


def block_of(lanes, ranks):
    """The automatic block size of src/mpi/mpi_check.c (OT_LANES mode)."""
    want = 32 * ranks
    return max(1, min(2048, -(-lanes // want)))


def project(lanes, ranks, per_lane, n, np_, nt, lat, bw, t_req, gather):
    in_w = n + np_
    rec = HEAD + n * nt * 8
    block = block_of(lanes, ranks)
    nblocks = -(-lanes // block)
    t_in = lat + lanes * 8 * in_w / bw
    # Dealer: its link carries all inputs once more; its CPU serves nblocks
    # requests. Workers want a block every block * per_lane seconds.
    t_deal_bytes = lanes * (8 + 8 * in_w) / bw
    t_deal_cpu = nblocks * t_req
    t_solve = lanes * per_lane / ranks
    # The root's own lanes shrink by the time it spends serving.
    busy = t_deal_cpu / max(t_solve, 1e-12)
    t_deal = max(t_solve, t_deal_bytes, t_deal_cpu)
    if gather:
        t_out = lanes * rec / bw
    else:
        t_out = lat * ranks + (lanes / ranks) * rec / bw  # each rank's share, links in parallel
    total = t_in + t_deal + t_out
    return dict(block=block, nblocks=nblocks, t_in=t_in, t_deal=t_deal, t_solve=t_solve,
                t_out=t_out, total=total, busy=busy, per_rank_out=lanes / ranks * rec,
                root_in=lanes * 8 * in_w, rec=rec)


def main():
    path = sys.argv[1]
    lanes = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    nts = [int(sys.argv[3])] if len(sys.argv) > 3 else [6, 50]
    per_lane, pp = measured(path)
    small = pp[min(pp)] * 1e-6
    big = max(pp)
    bw_here = big / (pp[big] * 1e-6)
    # A request costs the root one receive and one send of a small message.
    t_req_here = 2 * small
    nets = [
        ("here: shared memory (measured)", small, bw_here, t_req_here),
        ("25 GbE (assumed 15 us, 2.5 GB/s)", 15e-6, 2.5e9, t_req_here + 4e-6),
        ("HDR InfiniBand (assumed 1.5 us, 20 GB/s)", 1.5e-6, 20e9, t_req_here + 1e-6),
    ]
    print(f"measured: per lane {per_lane * 1e6:.0f} us on one core; small message "
          f"{small * 1e6:.2f} us one way; {big >> 20} MiB at {bw_here / 1e9:.2f} GB/s")
    print(f"Robertson: n = 3, np = 3 (48 B of inputs a lane), N = {lanes:,} lanes\n")
    print("| nodes x ranks | network | nt | output B/lane | block | blocks | inputs to root (s) "
          "| solve (s) | dealer CPU / solve | outputs distributed (s) | outputs gathered (s) "
          "| total distributed (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for nt in nts:
        for nodes, per in [(1, 2), (64, 1), (64, 32)]:
            ranks = nodes * per
            for name, lat, bw, t_req in nets[1:] if nodes > 1 else nets[:1]:
                d = project(lanes, ranks, per_lane, 3, 3, nt, lat, bw, t_req, False)
                g = project(lanes, ranks, per_lane, 3, 3, nt, lat, bw, t_req, True)
                print(f"| {nodes} x {per} | {name} | {nt} | {d['rec']} | {d['block']} | "
                      f"{d['nblocks']} | {d['t_in']:.3f} | {d['t_solve']:.3f} | "
                      f"{d['busy']:.2f} | {d['t_out']:.4f} | {g['t_out']:.3f} | "
                      f"{d['total']:.3f} |")


if __name__ == "__main__":
    main()

"""Float transcendental ufuncs (libmvec vector loops, src/ops/math_simd.cpp) against NumPy:
10M contiguous float64 and float32 elements, npc on 2 threads, medians of alternating runs.

Usage: python bench/bench_vector_math.py [--quick] [--write] [--ops exp,log,...]
  --write  replaces the "vector math" section of bench/RESULTS.md with the table.

Ratio = NumPy time / npc time (> 1: npc is faster); the target is >= 1.5 for exp, log, sin
and cos. NPC_VECTOR_MATH=0 runs npc's scalar loops (the figures before the vector path),
NPC_VECTOR_MATH=all the vector loop for every function (Note [vector math policy]).
"""
import argparse
import os
import statistics
import time

import numpy as np

import npc
from _results import write_section

# The ufuncs with a vector-math loop: the rows of the op table with a vmath column.
OPS = [r.name for r in npc._core.op_table() if r.vmath]


def inputs(op, dtype, n, rng):
    """Ordinary in-domain inputs (no warnings) of `op`: uniform in [-5, 5], else in [1, 6]
    (logarithms, arccosh), else in [-0.9, 0.9] (arcsin, arccos, arctanh), the first of these
    on which NumPy's `op` raises no floating-point error."""
    x = rng.random(n) * 10 - 5
    for cand in (x, np.abs(x) + 1, x / 5.5):
        try:
            with np.errstate(all="raise"):
                getattr(np, op)(cand.astype(dtype))
        except FloatingPointError:
            continue
        x = cand
        break
    return x.astype(dtype)


def medians(f_np, f_npc, rep):
    t_np, t_npc = [], []
    for _ in range(rep):
        t0 = time.perf_counter()
        f_np()
        t1 = time.perf_counter()
        f_npc()
        t_np.append(t1 - t0)
        t_npc.append(time.perf_counter() - t1)
    return statistics.median(t_np), statistics.median(t_npc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--ops", default=",".join(OPS))
    args = ap.parse_args()
    n, rep = (1_000_000, 5) if args.quick else (10_000_000, 7)
    npc.set_num_threads(2)
    rng = np.random.default_rng(0)
    lines = ["## Vector math: float transcendental ufuncs (bench/bench_vector_math.py)", "",
             f"{n // 1_000_000}M contiguous elements, npc on 2 threads, NumPy {np.__version__}"
             f", NPC_VECTOR_MATH={os.environ.get('NPC_VECTOR_MATH', '(default)')}.", "",
             "| op | dtype | NumPy ms | npc ms | NumPy/npc |", "|---|---|---:|---:|---:|"]
    for dtype in (np.float64, np.float32):
        for op in args.ops.split(","):
            a = inputs(op, dtype, n, rng)
            x = npc.asarray(a)
            f_np, f_npc = getattr(np, op), getattr(npc, op)
            f_np(a), f_npc(x)
            t_np, t_npc = medians(lambda: f_np(a), lambda: f_npc(x), rep)
            lines.append(f"| {op} | {np.dtype(dtype).name} | {t_np * 1e3:.1f} | {t_npc * 1e3:.1f} | {t_np / t_npc:.2f} |")
            print(lines[-1], flush=True)
    lines.append(f"\nLoad average at the end: {os.getloadavg()[0]:.1f} (shared 2-core machine: rows move by "
                 "tens of percent between runs).")
    if args.write:
        write_section("bench_vector_math", lines)


if __name__ == "__main__":
    main()

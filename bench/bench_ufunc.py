"""ufunc benchmarks: npc against NumPy in the same run (medians, ratios). The reduction
targets (sum/mean/max over all and over an axis) are in bench/bench_reductions.py.

Usage: python bench/bench_ufunc.py [--quick] [--write]
  --write  replaces the "ufuncs" section of bench/RESULTS.md with the table.

Ratios are NumPy time / npc time for large arrays (> 1 means npc is faster) and npc time /
NumPy time per call for small arrays (the issue's targets: >= 1.5x on a 10M float64 add
with 2 threads; <= 1.5x per call on 10-element arrays; indexing and attributes close to
NumPy).
"""
import argparse
import builtins
import os
import platform
import sys
import time
import timeit
from operator import setitem

import numpy as np

import npc
from _results import median_time, write_section


def _one_thread(fn):
    old = npc.get_num_threads()
    npc.set_num_threads(1)
    try:
        return fn()
    finally:
        npc.set_num_threads(old)


def large_cases(n):
    rng = np.random.default_rng(0)
    a, b = rng.random(n), rng.random(n)
    x, y = npc.asarray(a), npc.asarray(b)
    o_np, o_npc = np.empty_like(a), npc.empty(n)
    at, xt = a[::2], npc.asarray(a[::2])
    bt, yt = b[::2], npc.asarray(b[::2])
    af = a.astype(np.float32)
    xf = npc.asarray(af)
    return [
        ("add 10M float64", lambda: a + b, lambda: x + y),
        ("add 10M float64, npc 1 thread", lambda: a + b, lambda: _one_thread(lambda: x + y)),
        ("sum 10M float64, npc 1 thread", lambda: a.sum(), lambda: _one_thread(lambda: x.sum())),
        ("add 10M float64 out=", lambda: np.add(a, b, out=o_np), lambda: npc.add(x, y, out=o_npc)),
        ("add 5M float64 strided", lambda: at + bt, lambda: xt + yt),
        ("add 10M + scalar (broadcast)", lambda: a + 1.5, lambda: x + 1.5),
        ("exp 10M float64", lambda: np.exp(a), lambda: npc.exp(x)),
        ("log 10M float64", lambda: np.log(a), lambda: npc.log(x)),
        ("sin 10M float64", lambda: np.sin(a), lambda: npc.sin(x)),
        ("cos 10M float64", lambda: np.cos(a), lambda: npc.cos(x)),
        ("exp 10M float32", lambda: np.exp(af), lambda: npc.exp(xf)),
        ("log 10M float32", lambda: np.log(af), lambda: npc.log(xf)),
        ("sin 10M float32", lambda: np.sin(af), lambda: npc.sin(xf)),
        ("cos 10M float32", lambda: np.cos(af), lambda: npc.cos(xf)),
    ]


def small_cases():
    a, b = np.arange(10.0), np.arange(10.0) + 1
    x, y = npc.asarray(a.copy()), npc.asarray(b.copy())
    return [
        ("a + b", lambda: a + b, lambda: x + y),
        ("a * 2.0", lambda: a * 2.0, lambda: x * 2.0),
        ("a < b", lambda: a < b, lambda: x < y),
        ("-a", lambda: -a, lambda: -x),
        ("add(a, b)", lambda: np.add(a, b), lambda: npc.add(x, y)),
        ("sin(a)", lambda: np.sin(a), lambda: npc.sin(x)),
        ("sum(a)", lambda: np.sum(a), lambda: npc.sum(x)),
        ("a.sum()", lambda: a.sum(), lambda: x.sum()),
        ("a.max()", lambda: a.max(), lambda: x.max()),
        ("mean(a)", lambda: np.mean(a), lambda: npc.mean(x)),
        ("a[3]", lambda: a[3], lambda: x[3]),
        ("a[3] = 1.0", lambda: setitem(a, 3, 1.0), lambda: setitem(x, 3, 1.0)),
        ("a[1:5]", lambda: a[1:5], lambda: x[1:5]),
        ("a.shape", lambda: a.shape, lambda: x.shape),
        ("a.dtype", lambda: a.dtype, lambda: x.dtype),
        ("a.ndim", lambda: a.ndim, lambda: x.ndim),
        ("a.size", lambda: a.size, lambda: x.size),
        ("len(a)", lambda: len(a), lambda: len(x)),
    ]


def small_ns(f_np, f_npc, number=2000, repeat=9):
    """Per-call CPU time (process_time: steadier than wall time on a shared machine), best of
    `repeat` runs, NumPy and npc timed alternately so both see the same load."""
    best_np = best_npc = float("inf")
    for _ in range(repeat):
        best_np = builtins.min(best_np, timeit.timeit(f_np, number=number, timer=time.process_time))
        best_npc = builtins.min(best_npc, timeit.timeit(f_npc, number=number, timer=time.process_time))
    return best_np / number * 1e9, best_npc / number * 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--small", action="store_true", help="only the 10-element rows")
    args = ap.parse_args()
    npc.set_num_threads(2)
    n = 2_000_000 if args.quick else 10_000_000
    rep = 5 if args.quick else 9
    lines = ["## ufuncs", "",
             f"`python bench/bench_ufunc.py` on {platform.machine()} ({os.cpu_count()} cores; load average "
             f"{os.getloadavg()[0]:.1f} at start), NumPy {np.__version__}, npc threads "
             f"{npc.get_num_threads()}. Medians of {rep} runs.", "",
             "| large arrays | NumPy ms | npc ms | NumPy/npc |", "|---|---:|---:|---:|"]
    for name, f_np, f_npc in ([] if args.small else large_cases(n)):
        f_np(), f_npc()
        t_np, t_npc = median_time(f_np, 2, rep), median_time(f_npc, 2, rep)
        lines.append(f"| {name} | {t_np * 1e3:.2f} | {t_npc * 1e3:.2f} | {t_np / t_npc:.2f} |")
        print(lines[-1], flush=True)
    lines += ["", "| 10-element float64 arrays, per call (CPU time, best of 9, alternating) | NumPy ns | npc ns "
              "| npc/NumPy |", "|---|---:|---:|---:|"]
    for name, f_np, f_npc in small_cases():
        t_np, t_npc = small_ns(f_np, f_npc)
        lines.append(f"| {name} | {t_np:.0f} | {t_npc:.0f} | {t_npc / t_np:.2f} |")
        print(lines[-1], flush=True)
    lines.append(f"\nLoad average at the end: {os.getloadavg()[0]:.1f}. The machine is shared (2 cores, other "
                 "builds running), so large-array rows move by tens of percent between runs; small-call rows "
                 "alternate NumPy and npc and keep the best CPU time of each, which is steadier. `c = a + b` "
                 "on large arrays reuses freed blocks (Note [large block cache] in src/core/ndarray.cpp), "
                 "so npc's result pages are already mapped while NumPy's fault in.")
    if args.write:
        write_section("bench_ufunc", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())

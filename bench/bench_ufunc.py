"""ufunc and reduction benchmarks: npc against NumPy in the same run (medians, ratios).

Usage: python bench/bench_ufunc.py [--quick] [--write]
  --write  replaces the "ufuncs" section of bench/RESULTS.md with the table.

Ratios are NumPy time / npc time for large arrays (> 1 means npc is faster) and npc time /
NumPy time per call for small arrays (the issue's targets: >= 1.5x on a 10M float64 add
with 2 threads; <= 1.5x per call on 10-element arrays).
"""
import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

import npc


def median_time(fn, number, repeat):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        ts.append((time.perf_counter() - t0) / number)
    return statistics.median(ts)


def large_cases(n):
    rng = np.random.default_rng(0)
    a, b = rng.random(n), rng.random(n)
    x, y = npc.asarray(a), npc.asarray(b)
    o_np, o_npc = np.empty_like(a), npc.empty(n)
    a2, x2 = a.reshape(1000, -1), x.reshape(1000, -1)
    at, xt = a[::2], npc.asarray(a[::2])
    bt, yt = b[::2], npc.asarray(b[::2])
    return [
        ("add 10M float64", lambda: a + b, lambda: x + y),
        ("add 10M float64 out=", lambda: np.add(a, b, out=o_np), lambda: npc.add(x, y, out=o_npc)),
        ("add 5M float64 strided", lambda: at + bt, lambda: xt + yt),
        ("add 10M + scalar (broadcast)", lambda: a + 1.5, lambda: x + 1.5),
        ("exp 10M float64", lambda: np.exp(a), lambda: npc.exp(x)),
        ("sum 10M float64", lambda: a.sum(), lambda: x.sum()),
        ("mean 10M float64", lambda: a.mean(), lambda: x.mean()),
        ("max 10M float64", lambda: a.max(), lambda: x.max()),
        ("sum axis=0 (1000, 10000)", lambda: a2.sum(axis=0), lambda: x2.sum(axis=0)),
        ("sum axis=1 (1000, 10000)", lambda: a2.sum(axis=1), lambda: x2.sum(axis=1)),
        ("max axis=1 (1000, 10000)", lambda: a2.max(axis=1), lambda: x2.max(axis=1)),
        ("mean axis=0 (1000, 10000)", lambda: a2.mean(axis=0), lambda: x2.mean(axis=0)),
    ]


def small_cases():
    a = np.arange(10.0)
    x = npc.asarray(a)
    return [
        ("a + b", lambda: a + a, lambda: x + x),
        ("a * 2.0", lambda: a * 2.0, lambda: x * 2.0),
        ("a < b", lambda: a < a, lambda: x < x),
        ("-a", lambda: -a, lambda: -x),
        ("add(a, b)", lambda: np.add(a, a), lambda: npc.add(x, x)),
        ("sin(a)", lambda: np.sin(a), lambda: npc.sin(x)),
        ("sum(a)", lambda: np.sum(a), lambda: npc.sum(x)),
        ("a.sum()", lambda: a.sum(), lambda: x.sum()),
        ("a.max()", lambda: a.max(), lambda: x.max()),
        ("mean(a)", lambda: np.mean(a), lambda: npc.mean(x)),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    npc.set_num_threads(2)
    n = 2_000_000 if args.quick else 10_000_000
    rep = 5 if args.quick else 9
    lines = ["## ufuncs", "",
             f"`python bench/bench_ufunc.py` on {platform.machine()} ({os.cpu_count()} cores; load average "
             f"{os.getloadavg()[0]:.1f} at start), NumPy {np.__version__}, npc threads "
             f"{npc.get_num_threads()}. Medians of {rep} runs.", "",
             "| large arrays | NumPy ms | npc ms | NumPy/npc |", "|---|---:|---:|---:|"]
    for name, f_np, f_npc in large_cases(n):
        f_np(), f_npc()
        t_np, t_npc = median_time(f_np, 2, rep), median_time(f_npc, 2, rep)
        lines.append(f"| {name} | {t_np * 1e3:.2f} | {t_npc * 1e3:.2f} | {t_np / t_npc:.2f} |")
        print(lines[-1], flush=True)
    lines += ["", "| 10-element arrays, per call | NumPy ns | npc ns | npc/NumPy |", "|---|---:|---:|---:|"]
    for name, f_np, f_npc in small_cases():
        t_np, t_npc = median_time(f_np, 2000, rep), median_time(f_npc, 2000, rep)
        lines.append(f"| {name} | {t_np * 1e9:.0f} | {t_npc * 1e9:.0f} | {t_npc / t_np:.2f} |")
        print(lines[-1], flush=True)
    table = "\n".join(lines) + "\n"
    if args.write:
        path = os.path.join(os.path.dirname(__file__), "RESULTS.md")
        old = open(path).read() if os.path.exists(path) else "# Benchmark results\n\n"
        start = old.find("## ufuncs")
        if start >= 0:
            end = old.find("\n## ", start + 1)
            old = old[:start] + (old[end + 1:] if end >= 0 else "")
        with open(path, "w") as f:
            f.write(old.rstrip("\n") + "\n\n" + table)
    return 0


if __name__ == "__main__":
    sys.exit(main())

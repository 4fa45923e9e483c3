"""Reductions against NumPy: the contiguous targets (sum/mean/max over all and over an axis of
10M float64: at least NumPy's speed) and the layouts whose order follows NumPy's buffered
iteration (reversed and strided views, casts through NumPy's buffer; Note [NumPy reduction
order] in src/ops/reduce.cpp). Every row also checks that npc's result has NumPy's bits.

Usage: python bench/bench_reductions.py [--quick] [--write] [--cpu]
(--write replaces this script's section of bench/RESULTS.md; --cpu adds a table of CPU time
on one thread, process time of NumPy and npc alike, which a busy shared machine disturbs far
less than wall-clock time on two threads)."""
import argparse
import os
import platform
import sys
import time

import numpy as np

import npc
from _results import median_time, write_section


def median_ms(fn, repeat, clock=time.perf_counter):
    fn()   # warm-up: first-touch of outputs, thread start
    return median_time(fn, 1, repeat, clock) * 1e3


def cases(n):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n)
    x = npc.asarray(a)
    a2, x2 = a.reshape(1000, -1), x.reshape(1000, -1)
    a3 = a.reshape(100, 100, -1)
    rev, xrev = a3[::-1, ::-1, ::-1], npc.asarray(a3[::-1, ::-1, ::-1])
    st, xst = a3[::-1, :, ::2], npc.asarray(a3[::-1, :, ::2])
    f32 = a.astype(np.float32)
    xf32 = npc.asarray(f32)
    ints = rng.integers(0, 1000, n)
    xints = npc.asarray(ints)
    f16, i32 = a.astype(np.float16), ints.astype(np.int32)
    xf16, xi32 = npc.asarray(f16), npc.asarray(i32)
    f32_2 = f32.reshape(1000, -1)
    xf32_2 = npc.asarray(f32_2)
    prod_st = (1 + a / 1e5).reshape(100, 100, -1)[::-1, :, ::2]
    xprod_st = npc.asarray(prod_st)
    return [
        ("sum 10M float64", lambda: a.sum(), lambda: x.sum()),
        ("mean 10M float64", lambda: a.mean(), lambda: x.mean()),
        ("max 10M float64", lambda: a.max(), lambda: x.max()),
        ("sum axis=0 (1000, 10000)", lambda: a2.sum(axis=0), lambda: x2.sum(axis=0)),
        ("sum axis=1 (1000, 10000)", lambda: a2.sum(axis=1), lambda: x2.sum(axis=1)),
        ("mean axis=0 (1000, 10000)", lambda: a2.mean(axis=0), lambda: x2.mean(axis=0)),
        ("max axis=1 (1000, 10000)", lambda: a2.max(axis=1), lambda: x2.max(axis=1)),
        ("sum (100,100,1000)[::-1,::-1,::-1]", lambda: rev.sum(), lambda: xrev.sum()),
        ("sum (100,100,1000)[::-1,:,::2]", lambda: st.sum(), lambda: xst.sum()),
        ("sum (100,100,1000)[::-1,:,::2] axis=(0,2)", lambda: st.sum(axis=(0, 2)), lambda: xst.sum(axis=(0, 2))),
        ("sum (100,100,1000)[::-1,:,::2] axis=0", lambda: st.sum(axis=0), lambda: xst.sum(axis=0)),
        ("sum 10M float32 dtype=float64", lambda: f32.sum(dtype=np.float64), lambda: xf32.sum(dtype=np.float64)),
        ("mean 10M int64", lambda: ints.mean(), lambda: xints.mean()),
        # Casts through NumPy's buffer (Note [cast pieces]) and outer reductions of views
        # (Note [row-wise outer reductions]).
        ("sum 10M float16 dtype=float32", lambda: f16.sum(dtype=np.float32), lambda: xf16.sum(dtype=np.float32)),
        ("mean 10M float16", lambda: f16.mean(), lambda: xf16.mean()),
        ("sum 10M int32", lambda: i32.sum(), lambda: xi32.sum()),
        ("prod 10M float32 dtype=float64", lambda: f32.prod(dtype=np.float64), lambda: xf32.prod(dtype=np.float64)),
        ("sum axis=0 (1000, 10000) float32 dtype=float64", lambda: f32_2.sum(axis=0, dtype=np.float64),
         lambda: xf32_2.sum(axis=0, dtype=np.float64)),
        ("mean (100,100,1000)[::-1,:,::2] axis=0", lambda: st.mean(axis=0), lambda: xst.mean(axis=0)),
        ("max (100,100,1000)[::-1,:,::2] axis=0", lambda: st.max(axis=0), lambda: xst.max(axis=0)),
        ("min (100,100,1000)[::-1,:,::2] axis=0", lambda: st.min(axis=0), lambda: xst.min(axis=0)),
        ("prod (100,100,1000)[::-1,:,::2] axis=0", lambda: prod_st.prod(axis=0), lambda: xprod_st.prod(axis=0)),
        ("sum (100,100,1000)[::-1,::-1,::-1] axis=0", lambda: rev.sum(axis=0), lambda: xrev.sum(axis=0)),
    ]


def same_bits(e, g):
    e = np.asarray(e)
    g = np.asarray(g)
    return e.dtype == g.dtype and e.shape == g.shape and e.tobytes() == g.tobytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--cpu", action="store_true")
    args = ap.parse_args()
    npc.set_num_threads(2)
    n = 2_000_000 if args.quick else 10_000_000
    rep = 5 if args.quick else 9
    lines = ["## Reductions and NumPy's order (bench/bench_reductions.py)", "",
             f"`{' '.join(['python bench/bench_reductions.py'] + sys.argv[1:])}` on {platform.machine()} ({os.cpu_count()} cores; load average "
             f"{os.getloadavg()[0]:.1f} at start), NumPy {np.__version__}, npc threads {npc.get_num_threads()}. "
             f"Medians of {rep} runs, wall clock. Ratio = NumPy time / npc time (target for the first seven "
             "rows: >= 1). `bits` = npc's result is NumPy's, bit for bit.", "",
             "| case | NumPy ms | npc ms | NumPy/npc | bits |", "|---|---:|---:|---:|---|"]
    for name, f_np, f_npc in cases(n):
        t_np, t_npc = median_ms(f_np, rep), median_ms(f_npc, rep)
        ok = same_bits(f_np(), f_npc())
        lines.append(f"| {name} | {t_np:.2f} | {t_npc:.2f} | {t_np / t_npc:.2f} | {'yes' if ok else 'NO'} |")
        print(lines[-1], flush=True)
    lines.append(f"\nLoad average at the end: {os.getloadavg()[0]:.1f} (a shared machine: single runs move by "
                 "tens of percent).")
    if args.cpu:
        npc.set_num_threads(1)
        lines += ["", f"CPU time on one thread (`--cpu`: process time, npc threads 1; load average "
                  f"{os.getloadavg()[0]:.1f} at start). Ratio = NumPy / npc: the work per element, which "
                  "two threads on a quiet machine roughly halve in wall-clock time.", "",
                  "| case | NumPy CPU ms | npc CPU ms | NumPy/npc |", "|---|---:|---:|---:|"]
        for name, f_np, f_npc in cases(n):
            t_np = median_ms(f_np, rep, time.process_time)
            t_npc = median_ms(f_npc, rep, time.process_time)
            lines.append(f"| {name} | {t_np:.2f} | {t_npc:.2f} | {t_np / t_npc:.2f} |")
            print(lines[-1], flush=True)
        npc.set_num_threads(2)
    if args.write:
        write_section("bench_reductions", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())

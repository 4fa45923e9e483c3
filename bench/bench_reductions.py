"""Reductions against NumPy: the contiguous targets (sum/mean/max over all and over an axis of
10M float64: at least NumPy's speed) and the layouts whose order follows NumPy's buffered
iteration (reversed and strided views, casts through NumPy's buffer; Note [NumPy reduction
order] in src/ops/reduce.cpp). Every row also checks that npc's result has NumPy's bits.

Usage: python bench/bench_reductions.py [--quick] [--write]
(--write replaces this script's section of bench/RESULTS.md)."""
import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

import npc


def median_ms(fn, repeat):
    fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


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
    ]


def same_bits(e, g):
    e = np.asarray(e)
    g = np.asarray(g)
    return e.dtype == g.dtype and e.shape == g.shape and e.tobytes() == g.tobytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    npc.set_num_threads(2)
    n = 2_000_000 if args.quick else 10_000_000
    rep = 5 if args.quick else 9
    lines = ["## Reductions and NumPy's order (bench/bench_reductions.py)", "",
             f"`python bench/bench_reductions.py` on {platform.machine()} ({os.cpu_count()} cores; load average "
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
    if args.write:
        write_results(lines)
    return 0


def write_results(lines):
    """Replaces this script's section of bench/RESULTS.md (between its markers), or appends it."""
    path = os.path.join(os.path.dirname(__file__), "RESULTS.md")
    begin, end = "<!-- bench_reductions -->", "<!-- /bench_reductions -->"
    text = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
    block = "\n".join([begin] + lines + [end])
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    sys.exit(main())

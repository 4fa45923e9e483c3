"""Indexing, joining and sorting: npc against NumPy side by side in one process.

Medians of repeated wall-clock runs on 10M-element float64 arrays (1M for the slower
argsort/unique rows); ratio = NumPy time / npc time (> 1: npc faster). Updates the
"indexing" section of bench/RESULTS.md.
"""
import os
import pathlib
import re
import statistics
import sys
import time

import numpy as np

import npc

N = 10_000_000
REPEAT = int(os.environ.get("NPC_BENCH_REPEAT", "7"))


def median_time(fn, repeat=REPEAT):
    fn()  # warm up (page faults, lazy initialisation)
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def cases():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(N)
    mask = rng.random(N) < 0.5
    idx = rng.integers(0, N, N)
    half1, half2 = a[: N // 2].copy(), a[N // 2:].copy()
    small = rng.standard_normal(1_000_000)
    small_int = rng.integers(0, 1000, 1_000_000)
    pa, pmask, pidx = npc.asarray(a), npc.asarray(mask), npc.asarray(idx)
    ph1, ph2 = npc.asarray(half1), npc.asarray(half2)
    psmall, psmall_int = npc.asarray(small), npc.asarray(small_int)
    a2 = a.reshape(1000, -1)
    pa2 = pa.reshape(1000, -1)
    return [
        ("a[mask] (10M float64, 50% true)", lambda: a[mask], lambda: pa[pmask]),
        ("np.take(a, idx) (10M random int64 indices)", lambda: np.take(a, idx), lambda: npc.take(pa, pidx)),
        ("a[idx] (10M random int64 indices)", lambda: a[idx], lambda: pa[pidx]),
        ("np.concatenate([a, b]) (2 x 5M -> 10M)", lambda: np.concatenate([half1, half2]),
         lambda: npc.concatenate([ph1, ph2])),
        ("np.sort(a) (10M float64)", lambda: np.sort(a), lambda: npc.sort(pa)),
        ("np.sort(a2, axis=0) (1000 x 10000)", lambda: np.sort(a2, axis=0), lambda: npc.sort(pa2, axis=0)),
        ("a[mask] = 0.0 (10M)", lambda: a.copy().__setitem__(mask, 0.0),
         lambda: pa.copy().__setitem__(pmask, 0.0)),
        ("a[::-1].copy() (10M)", lambda: a[::-1].copy(), lambda: pa[::-1].copy()),
        ("np.argsort(a) (1M float64)", lambda: np.argsort(small), lambda: npc.argsort(psmall)),
        ("np.unique(a) (1M int64, 1000 values)", lambda: np.unique(small_int), lambda: npc.unique(psmall_int)),
        ("np.nonzero(mask) (10M bool)", lambda: np.nonzero(mask), lambda: npc.nonzero(pmask)),
    ]


NOTES = {
    "np.sort(a) (10M float64)": "Highway vqsort (AVX2 here) vs NumPy's x86-simd-sort",
    "np.argsort(a) (1M float64)": "npc argsort is always stable (std::stable_sort of indices)",
    "np.unique(a) (1M int64, 1000 values)": "stable argsort based (first indices/inverse computed too)",
}


def main():
    rows = []
    with npc.config.patch(strict_fallback=True):
        for name, fn_np, fn_npc in cases():
            t_np = median_time(fn_np)
            t_npc = median_time(fn_npc)
            rows.append((name, t_np * 1e3, t_npc * 1e3, t_np / t_npc))
            print(f"{name:50s} numpy {t_np * 1e3:9.2f} ms   npc {t_npc * 1e3:9.2f} ms   ratio {t_np / t_npc:5.2f}",
                  flush=True)
    threads = os.environ.get("OMP_NUM_THREADS", str(os.cpu_count()))
    lines = ["## Indexing, joining, sorting (bench/bench_indexing.py)", "",
             f"Median of {REPEAT} runs, wall clock, {os.cpu_count()} cores (OpenMP threads: {threads}), NumPy "
             f"{np.__version__}; ratio = NumPy time / npc time (> 1: npc faster). Targets: mask selection, take "
             "and concatenate >= 1.0; sort >= 1.0, else >= 0.5 with the reason.", "",
             "| operation | NumPy ms | npc ms | ratio | note |", "| --- | ---: | ---: | ---: | --- |"]
    for name, tn, tp, r in rows:
        lines.append(f"| `{name}` | {tn:.2f} | {tp:.2f} | {r:.2f} | {NOTES.get(name, '')} |")
    section = "<!-- bench_indexing -->\n" + "\n".join(lines) + "\n<!-- /bench_indexing -->"
    path = pathlib.Path(__file__).parent / "RESULTS.md"
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    if "<!-- bench_indexing -->" in text:
        text = re.sub(r"<!-- bench_indexing -->.*?<!-- /bench_indexing -->", lambda m: section, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Indexing, joining and sorting: npc against NumPy side by side in one process.

Medians of repeated wall-clock runs on 10M-element float64 arrays (1M for the slower
argsort/unique rows); ratio = NumPy time / npc time (> 1: npc faster). Updates the
"indexing" section of bench/RESULTS.md.
"""
import os
import statistics
import sys
import time

import numpy as np

import npc
from _results import write_section

N = 10_000_000
REPEAT = int(os.environ.get("NPC_BENCH_REPEAT", "7"))


def paired_times(fn_a, fn_b, repeat=REPEAT):
    """Medians and minima of `repeat` runs of each, alternating a and b so that load from
    other processes on a shared machine falls on both alike."""
    fn_a(), fn_b()  # warm up (page faults, lazy initialisation)
    ta, tb = [], []
    for _ in range(repeat):
        for fn, ts in ((fn_a, ta), (fn_b, tb)):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return statistics.median(ta), statistics.median(tb), min(ta), min(tb)


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
    "np.sort(a) (10M float64)": "Highway 1.0 vqsort vs NumPy's x86-simd-sort (AVX-512 on this CPU), "
                                "plus npc's NaN/inf pre-pass",
    "np.argsort(a) (1M float64)": "npc argsort is always stable: vqsort of packed (key, index) pairs",
    "np.unique(a) (1M int64, 1000 values)": "stable argsort based (first indices/inverse computed too)",
}


def main():
    rows = []
    with npc.config.patch(strict_fallback=True):
        for name, fn_np, fn_npc in cases():
            t_np, t_npc, b_np, b_npc = paired_times(fn_np, fn_npc)
            rows.append((name, t_np * 1e3, t_npc * 1e3, t_np / t_npc, b_np / b_npc))
            print(f"{name:50s} numpy {t_np * 1e3:9.2f} ms   npc {t_npc * 1e3:9.2f} ms   ratio {t_np / t_npc:5.2f}"
                  f"   best-of ratio {b_np / b_npc:5.2f}", flush=True)
    threads = os.environ.get("OMP_NUM_THREADS", str(os.cpu_count()))
    lines = ["## Indexing, joining, sorting (bench/bench_indexing.py)", "",
             f"Median of {REPEAT} runs (NumPy and npc alternating), wall clock, {os.cpu_count()} cores (OpenMP "
             f"threads: {threads}), load average {os.getloadavg()[0]:.1f} during the run, NumPy {np.__version__}; "
             "ratio = NumPy time / npc time (> 1: npc faster), best-of = the same for the fastest runs. Targets: "
             "mask selection, take and concatenate >= 1.0; sort >= 1.0, else >= 0.5 with the reason.", "",
             "| operation | NumPy ms | npc ms | ratio | best-of ratio | note |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    for name, tn, tp, r, rb in rows:
        lines.append(f"| `{name}` | {tn:.2f} | {tp:.2f} | {r:.2f} | {rb:.2f} | {NOTES.get(name, '')} |")
    write_section("bench_indexing", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Linear algebra and random numbers, npc against NumPy side by side in one process.

Matrix products and LAPACK calls with 2 BLAS threads (OPENBLAS_NUM_THREADS=2 for both
libraries' OpenBLAS), random streams of 10M values on one thread. Each row: median wall
time of NumPy and of npc over the repeats, and NumPy time / npc time (> 1: npc is faster).
Updates the "linalg and random" section of bench/RESULTS.md.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
os.environ.setdefault("OMP_NUM_THREADS", "2")

import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import npc  # noqa: E402
from _results import write_section  # noqa: E402

N_RANDOM = 10_000_000


def median_times(f_np, f_npc, repeats):
    """Medians of NumPy's and npc's times, measured alternately so that both see the same
    machine load."""
    f_np(), f_npc()  # warm-up (page faults, thread pools)
    t_np, t_npc = [], []
    for _ in range(repeats):
        for fn, acc in ((f_np, t_np), (f_npc, t_npc)):
            t0 = time.perf_counter()
            fn()
            acc.append(time.perf_counter() - t0)
    return statistics.median(t_np), statistics.median(t_npc)


def cases():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1024, 1024))
    b = rng.standard_normal((1024, 1024))
    A, B = npc.asarray(a), npc.asarray(b)
    af = a.astype(np.float32)
    bf = b.astype(np.float32)
    Af, Bf = npc.asarray(af), npc.asarray(bf)
    s = rng.standard_normal((64, 32, 32))
    S = npc.asarray(s)
    m = rng.standard_normal((512, 512)) + 512 * np.eye(512)
    M = npc.asarray(m)
    ai = rng.integers(-9, 9, (256, 256))
    Ai = npc.asarray(ai)
    yield "matmul 1024x1024 float64", lambda: a @ b, lambda: A @ B, 7
    yield "matmul 1024x1024 float32", lambda: af @ bf, lambda: Af @ Bf, 7
    yield "matmul 64 x (32x32 @ 32x32) float64", lambda: s @ s, lambda: S @ S, 15
    yield "matmul 256x256 int64", lambda: ai @ ai, lambda: Ai @ Ai, 5
    yield "einsum ij,jk,kl->il optimize 512", lambda: np.einsum("ij,jk,kl->il", m, m, m, optimize=True), \
        lambda: npc.einsum("ij,jk,kl->il", M, M, M, optimize=True), 5
    yield "linalg.solve 512x512", lambda: np.linalg.solve(m, m), lambda: npc.linalg.solve(M, M), 7
    yield "linalg.inv 512x512", lambda: np.linalg.inv(m), lambda: npc.linalg.inv(M), 7
    yield "linalg.svd 512x512", lambda: np.linalg.svd(m), lambda: npc.linalg.svd(M), 3
    yield "linalg.eigh 512x512", lambda: np.linalg.eigh(m + m.T), lambda: npc.linalg.eigh(M + M.T), 3

    g_np, g_npc = np.random.default_rng(1), npc.random.default_rng(1)
    yield "Generator.random 10M", lambda: g_np.random(N_RANDOM), lambda: g_npc.random(N_RANDOM), 7
    yield "Generator.uniform 10M", lambda: g_np.uniform(-1.0, 2.0, N_RANDOM), \
        lambda: g_npc.uniform(-1.0, 2.0, N_RANDOM), 7
    yield "Generator.integers 10M int64", lambda: g_np.integers(0, 1000, N_RANDOM), \
        lambda: g_npc.integers(0, 1000, N_RANDOM), 7
    yield "Generator.integers 10M int32", lambda: g_np.integers(0, 1000, N_RANDOM, dtype=np.int32), \
        lambda: g_npc.integers(0, 1000, N_RANDOM, dtype=np.int32), 7
    yield "Generator.standard_normal 10M", lambda: g_np.standard_normal(N_RANDOM), \
        lambda: g_npc.standard_normal(N_RANDOM), 7
    yield "Generator.normal 10M", lambda: g_np.normal(1.0, 2.0, N_RANDOM), lambda: g_npc.normal(1.0, 2.0, N_RANDOM), 7
    yield "Generator.exponential 10M", lambda: g_np.exponential(1.0, N_RANDOM), \
        lambda: g_npc.exponential(1.0, N_RANDOM), 7
    r_np, r_npc = np.random.RandomState(1), npc.random.RandomState(1)
    yield "RandomState.rand 10M", lambda: r_np.rand(N_RANDOM), lambda: r_npc.rand(N_RANDOM), 7
    yield "RandomState.randn 10M", lambda: r_np.randn(N_RANDOM), lambda: r_npc.randn(N_RANDOM), 5
    yield "RandomState.randint 10M", lambda: r_np.randint(0, 1000, N_RANDOM), \
        lambda: r_npc.randint(0, 1000, N_RANDOM), 5


def main():
    rows = []
    for name, f_np, f_npc, reps in cases():
        t_np, t_npc = median_times(f_np, f_npc, reps)
        rows.append((name, t_np, t_npc))
        print(f"{name:42s} numpy {t_np * 1e3:9.2f} ms   npc {t_npc * 1e3:9.2f} ms   x{t_np / t_npc:5.2f}", flush=True)
    lines = ["## Linear algebra and random (bench/bench_linalg.py)", "",
             f"Median wall time (NumPy and npc timed alternately); BLAS/LAPACK with OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']} "
             f"(NumPy {np.__version__}: its bundled OpenBLAS; npc: the system OpenBLAS); random: one thread, "
             "the same streams. Targets: matmul 1024 float64 about 1.0x, random/uniform/integers >= 1.0x, "
             "standard_normal >= 0.9x. "
             f"Load average at the end of the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
             "(a shared machine: ratios of single runs vary by tens of percent).", "",
             "| case | NumPy ms | npc ms | NumPy time / npc time |", "| --- | ---: | ---: | ---: |"]
    for name, t_np, t_npc in rows:
        lines.append(f"| {name} | {t_np * 1e3:.2f} | {t_npc * 1e3:.2f} | {t_np / t_npc:.2f} |")
    write_section("bench_linalg", lines)


if __name__ == "__main__":
    main()

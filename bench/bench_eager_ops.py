"""Per-op overhead of npc's eager mode on the patterns real NumPy programs use (element
updates with NumPy-scalar values, small views, short dot products, small complex solves,
masks, small reductions, strided 2-D slice arithmetic), timed side by side with NumPy.

Each pattern is one statement run by timeit on NumPy arrays and on npc arrays holding the
same values, alternately, several repeats; the table gives medians per call and the ratio
NumPy time / npc time (> 1: npc faster; the target is >= 1/1.3 = 0.77). Usage:

    python bench/bench_eager_ops.py [--only substring] [--repeat N] [--write]
"""
import argparse
import os
import pathlib
import platform
import statistics
import sys
import time
import timeit

import numpy

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

TARGET = 1 / 1.3


def _setup(lib, name):
    """Namespace for a pattern: the library as `np` and its operands."""
    rng = numpy.random.default_rng(0)
    ns = {"np": lib}

    def arr(x):
        return lib.asarray(x) if lib is not numpy else x

    A = rng.random((50, 50)) + 50 * numpy.eye(50)
    ns["A"] = arr(A)
    ns["x20"] = arr(rng.random(20))
    ns["y20"] = arr(rng.random(20))
    ns["a8"] = arr(rng.random((8, 8)))
    ns["b8"] = arr(rng.random((8, 8)))
    ns["v8"] = arr(rng.random(8))
    c = rng.standard_normal((8, 8)) + 1j * rng.standard_normal((8, 8)) + 4 * numpy.eye(8)
    ns["c8"] = arr(c)
    ns["cv8"] = arr(rng.standard_normal((8, 4)) + 0j)
    c150 = rng.standard_normal((150, 150)) / numpy.sqrt(150)
    ns["A150"] = arr(c150)
    ns["V150"] = arr(rng.standard_normal((150, 4)))
    ns["eye150"] = arr(numpy.eye(150))
    ns["z"] = numpy.complex128(0.8 * numpy.exp(0.3j))
    ns["s"] = numpy.float64(0.25)
    ns["small"] = arr(rng.random(30))
    ns["zarr"] = arr(rng.random(1000) + 1j * rng.random(1000))
    img = rng.random((700, 700))
    yy, xx = numpy.indices(img.shape)
    ns["img"] = arr(img)
    ns["radius"] = arr(numpy.sqrt((xx - 349.5) ** 2 + (yy - 349.5) ** 2))
    ns["mask"] = arr(numpy.sqrt((xx - 349.5) ** 2 + (yy - 349.5) ** 2) < 100)
    ns["H"] = arr(rng.random((300, 300)))
    ns["H2"] = arr(rng.random((300, 300)))
    ns["col"] = arr(rng.random((67, 45)))
    ns["line"] = arr(rng.random(300_000))
    ns["scattered"] = arr(rng.random((700, 700)) < 0.02)
    ns["x20k"] = arr(rng.random(20_000))
    ns["idx160k"] = arr(rng.integers(0, 20_000, 160_000))
    ns["r2"] = arr(rng.random((150, 150)) + 0.01)
    ns["i"], ns["j"] = 30, 20
    return ns


# (name, statement): `np` is NumPy or npc; operands come from _setup.
PATTERNS = [
    ("scalar get A[i, j]", "A[i, j]"),
    ("scalar set A[i, j] = 0.5", "A[i, j] = 0.5"),
    ("scalar set A[i, j] = np.float64", "A[i, j] = s"),
    ("A[i, j] -= 0.5", "A[i, j] -= 0.5"),
    ("A[i, j] /= A[j, j]", "A[i, j] /= A[j, j]"),
    ("A[i, j] -= np.dot(A[i, :j], A[j, :j])", "A[i, j] -= np.dot(A[i, :j], A[j, :j])"),
    ("A[i, j] -= A[i, :j] @ A[:j, j]", "A[i, j] -= A[i, :j] @ A[:j, j]"),
    ("A[i, i] = np.sqrt(A[i, i])", "A[i, i] = np.sqrt(A[i, i])"),
    ("view A[i, :j]", "A[i, :j]"),
    ("view A[:, j]", "A[:, j]"),
    ("view A[1:-1, 1:-1]", "A[1:-1, 1:-1]"),
    ("np.dot 1-D (20)", "np.dot(x20, y20)"),
    ("x @ y 1-D (20)", "x20 @ y20"),
    ("a @ b 8x8", "a8 @ b8"),
    ("np.matmul 8x8 @ 8", "np.matmul(a8, v8)"),
    ("np.dot 8x8 8x8", "np.dot(a8, b8)"),
    ("linalg.solve complex 8x8", "np.linalg.solve(c8, cv8)"),
    ("linalg.inv complex 8x8", "np.linalg.inv(c8)"),
    ("linalg.solve z*I - A 150", "np.linalg.solve(z * eye150 - A150, V150)"),
    ("np.power(z, 1) scalar", "np.power(z, 1)"),
    ("np.power(arr, 2) 1000 complex", "np.power(zarr, 2)"),
    ("np.exp(1j * 0.3)", "np.exp(1j * 0.3)"),
    ("np.sqrt(np.float64)", "np.sqrt(s)"),
    ("np.linalg.norm(A[:, j])", "np.linalg.norm(A[:, j])"),
    ("mean of 30", "small.mean()"),
    ("np.mean of 30", "np.mean(small)"),
    ("mask (r1 <= R) & (R < r2) 700^2", "(10.0 <= radius) & (radius < 20.0)"),
    ("img[mask] 700^2", "img[mask]"),
    ("img[mask].mean() 700^2", "img[mask].mean()"),
    ("col[:, k] / np.float64", "col[:, 3] / s"),
    ("col[:, j] -= col[:, k] * np.float64", "col[:, 5] -= col[:, 3] * s"),
    ("heat 300^2 slice stencil", "H2[1:-1, 1:-1] = 0.2 * (H[1:-1, 1:-1] + H[:-2, 1:-1] + H[2:, 1:-1] + H[1:-1, :-2] + H[1:-1, 2:])"),
    ("300^2 strided add", "H[1:-1, 1:-1] + H[:-2, 1:-1]"),
    ("300^2 strided in-place +=", "H2[1:-1, 1:-1] += H[:-2, 1:-1]"),
    ("300^2 scalar * strided", "0.2 * H[1:-1, 1:-1]"),
    ("0.33 * (a[:-2] + a[1:-1] + a[2:]) 300K (temporaries)", "0.33333 * (line[:-2] + line[1:-1] + line[2:])"),
    ("np.float64 <= R 700^2", "s <= radius"),
    ("np.count_nonzero(mask) 700^2", "np.count_nonzero(scattered)"),
    ("img[scattered 2% mask] 700^2", "img[scattered]"),
    ("np.ones(160000)", "np.ones(160_000)"),
    ("np.full((400, 400), 2.5)", "np.full((400, 400), 2.5)"),
    ("x[idx] gather 160K of 20K", "x20k[idx160k]"),
    ("r2 ** -1.5 150^2", "r2 ** -1.5"),
]


def _number(stmt, ns):
    """Calls per timed run: about 20 ms of NumPy time."""
    t = timeit.Timer(stmt, globals=ns)
    n, _ = t.autorange()
    return max(1, n // 10)


def measure(name, stmt, repeat):
    import npc
    nss = {"numpy": _setup(numpy, name), "npc": _setup(npc, name)}
    number = _number(stmt, nss["numpy"])
    ts = {k: [] for k in nss}
    for _ in range(repeat):
        for k, ns in nss.items():
            ts[k].append(timeit.Timer(stmt, globals=ns).timeit(number) / number)
    return {k: statistics.median(v) for k, v in ts.items()}


def _fmt(t):
    return f"{t * 1e6:.2f}" if t < 1e-3 else f"{t * 1e6:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="run the patterns whose name contains this text")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--write", action="store_true", help="update the eager-ops section of bench/RESULTS.md")
    a = ap.parse_args()
    lines = ["| pattern | statement | NumPy us | npc us | ratio |", "| --- | --- | ---: | ---: | ---: |"]
    ratios = []
    for name, stmt in PATTERNS:
        if a.only and a.only not in name:
            continue
        t = measure(name, stmt, a.repeat)
        r = t["numpy"] / t["npc"]
        ratios.append(r)
        flag = "" if r >= TARGET else " *"
        print(f"{name:40s} numpy {_fmt(t['numpy']):>9s} us  npc {_fmt(t['npc']):>9s} us  {r:5.2f}x{flag}", flush=True)
        lines.append(f"| {name} | `{stmt}` | {_fmt(t['numpy'])} | {_fmt(t['npc'])} | {r:.2f}{flag} |")
    if not ratios:
        return
    import math
    gm = math.exp(sum(map(math.log, ratios)) / len(ratios))
    lines.append(f"| **geometric mean** | | | | **{gm:.2f}** |")
    print(f"geometric mean {gm:.2f}x; below target (1/1.3): {sum(r < TARGET for r in ratios)} of {len(ratios)}")
    if a.write:
        from _results import write_section
        cmd = "python bench/bench_eager_ops.py" + (f" --repeat {a.repeat}" if a.repeat != 7 else "") + \
            (f" --only '{a.only}'" if a.only else "") + " --write"
        head = ["## Eager per-op overhead on real-program patterns (bench/bench_eager_ops.py)", "",
                f"`{cmd}` on {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
                f"{os.cpu_count()} shared cores, load average {os.getloadavg()[0]:.1f} at the end, NumPy "
                f"{numpy.__version__}. Median time per call over {a.repeat} timeit runs, NumPy and npc "
                "alternating; ratio = NumPy time / npc time (> 1: npc faster; * marks ratios below the "
                "target 1/1.3 = 0.77).", ""]
        write_section("eager-ops", head + lines)


if __name__ == "__main__":
    main()

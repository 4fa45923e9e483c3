"""Per-call overhead of a replayed npc.compile function with tiny inputs, and tracing cost.

Usage: python bench/bench_compile.py [--markdown] [--no-write]
(updates its section of bench/RESULTS.md unless --no-write)

Measures, for a small elementwise function on 4-element arrays:
- NumPy running the function eagerly (the reference a user would compare with);
- npc eager (the same function on npc arrays, no compilation);
- the replay of the compiled function (guards + graph run), backend "eager" and "fused"
  (the latter falls back to "eager" when the fused backend is not built in);
- the guard check alone (a replay of a function that returns its input unchanged);
- tracing cost per recorded op (a chain of N ops traced from scratch).
"""
import argparse
import time
import timeit

import numpy as np

import npc
import _results


def best_us(fn, number=2000, repeat=7):
    """Best-of-`repeat` mean time of one call in microseconds."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def f(x, y, lr):
    return x * lr + y


def ident(x):
    return x


def gather2(x, i, j):
    return x[i, j] * 2


def masked_add(x, m):
    x[m] += 1.5
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    xn, yn = np.arange(4.0), np.ones(4)
    xc, yc = npc.asarray(xn), npc.asarray(yn)
    rows = []
    rows.append(("numpy eager  x*lr+y (4 float64)", best_us(lambda: f(xn, yn, 0.5))))
    rows.append(("npc eager    x*lr+y", best_us(lambda: f(xc, yc, 0.5))))
    for backend in ("eager", "fused"):
        cf = npc.compile(f, backend=backend)
        cf(xc, yc, 0.5)
        cf(xc, yc, 0.5)
        rows.append((f"npc.compile replay, npc in, backend={backend}", best_us(lambda: cf(xc, yc, 0.5))))
        cn = npc.compile(f, backend=backend)
        cn(xn, yn, 0.5)
        rows.append((f"npc.compile replay, numpy in, backend={backend}", best_us(lambda: cn(xn, yn, 0.5))))
    ci = npc.compile(ident, backend="eager")
    ci(xc)
    rows.append(("npc.compile replay of `return x` (guards + call)", best_us(lambda: ci(xc))))

    # Newly captured forms: a two-array gather (bounds-checked index inputs) and a masked
    # read-modify-write, NumPy in -> NumPy out, on 4x4 inputs.
    a = np.arange(16.0).reshape(4, 4)
    i, j = np.array([3, 0, 1]), np.array([1, 2, -1])
    rows.append(("numpy eager  x[i, j] * 2 (4x4, 3 indices)", best_us(lambda: gather2(a, i, j))))
    for backend in ("eager", "fused"):
        cg = npc.compile(gather2, backend=backend)
        cg(a, i, j)
        rows.append((f"npc.compile replay x[i, j] * 2, backend={backend}", best_us(lambda: cg(a, i, j))))
    m = a > 7
    rows.append(("numpy eager  x[m] += 1.5; x (4x4)", best_us(lambda: masked_add(a, m))))
    for backend in ("eager", "fused"):
        cm = npc.compile(masked_add, backend=backend)
        cm(a, m)
        rows.append((f"npc.compile replay x[m] += 1.5, backend={backend}", best_us(lambda: cm(a, m))))

    # Tracing cost per op: a chain of N ops, traced afresh each time.
    n = 200

    def chain(x):
        for _ in range(n):
            x = x * 1.0001 + 1.0
        return x
    t = []
    for _ in range(5):
        cc = npc.compile(chain, backend="eager")
        t0 = time.perf_counter()
        cc(xc)
        t.append(time.perf_counter() - t0)
    rows.append((f"tracing + first run, per op ({2 * n} ops)", min(t) / (2 * n) * 1e6))
    st = npc.compiler.stats()

    table = "| case | time per call (us) |\n|---|---|\n" + "".join(f"| {n} | {us:.2f} |\n" for n, us in rows)
    if not args.no_write:
        write_section(table)
    if args.markdown:
        print(table, end="")
    else:
        for name, us in rows:
            print(f"{name:<55} {us:9.2f} us")
        print("stats:", st)


def write_section(table):
    """Replaces the bench_compile section of bench/RESULTS.md (appends it when missing)."""
    import os
    load = os.getloadavg()[0]
    body = ("## npc.compile replay overhead (bench/bench_compile.py)\n\n"
            f"Best of 7, microseconds per call, 4-element float64 arrays, shared 2-core machine (noisy: "
            f"load average {load:.1f} during this run; compare rows with the NumPy row beside them). "
            "Target: the replay overhead (guards, argument conversion, dispatch) <= 10 us; the `return x` "
            "row is that overhead alone. The eager backend runs the graph op by op through call_ufunc; the "
            "fused backend runs one generated kernel.\n\n" + table.rstrip("\n"))
    _results.write_section("bench_compile", [body])


if __name__ == "__main__":
    main()

"""Per-call overhead of a replayed npc.compile function with tiny inputs, and tracing cost.

Usage: python bench/bench_compile.py [--markdown]

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


def best_us(fn, number=2000, repeat=7):
    """Best-of-`repeat` mean time of one call in microseconds."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def f(x, y, lr):
    return x * lr + y


def ident(x):
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--markdown", action="store_true")
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

    if args.markdown:
        print("| case | time per call (us) |\n|---|---|")
        for name, us in rows:
            print(f"| {name} | {us:.2f} |")
    else:
        for name, us in rows:
            print(f"{name:<55} {us:9.2f} us")
        print("stats:", st)


if __name__ == "__main__":
    main()

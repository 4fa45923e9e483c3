"""`make demo`: what npc runs today, side by side with NumPy.

This grows into the main job (NumPy code compiled into fused OpenMP kernels); at this stage
it shows the foundation: npc arrays created natively, NEP 50 promotion, zero-copy exchange
with NumPy, identical printing.
"""
import time

import numpy as np

import npc


def timed(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    print(f"npc {npc.__version__} on NumPy {np.__version__}\n")
    rows = []
    for name, make in [("zeros((4096, 4096))", lambda m: m.zeros((4096, 4096))),
                       ("arange(10_000_000)", lambda m: m.arange(10_000_000)),
                       ("linspace(0, 1, 10_000_000)", lambda m: m.linspace(0, 1, 10_000_000)),
                       ("eye(2000)", lambda m: m.eye(2000))]:
        same = np.array_equal(np.asarray(make(npc)), make(np))
        rows.append((name, same, timed(lambda: make(np)), timed(lambda: make(npc))))
    print(f"{'creation':32s} {'same as NumPy':>14s} {'NumPy ms':>10s} {'npc ms':>10s}")
    for name, same, tn, tc in rows:
        print(f"{name:32s} {str(same):>14s} {tn * 1e3:10.2f} {tc * 1e3:10.2f}")
    print("\nNEP 50 promotion (npc == NumPy):")
    for args in [(np.uint8, 300), (np.float32, 1.0), (np.int8, np.uint8, np.float16), (np.int64, np.uint64)]:
        arrs = [npc.ones(1, a) if isinstance(a, type) else a for a in args]
        print(f"  result_type{tuple(getattr(a, '__name__', a) for a in args)} -> "
              f"{npc.result_type(*arrs)} (NumPy: {np.result_type(*[np.ones(1, a) if isinstance(a, type) else a for a in args])})")
    src = np.arange(12.0).reshape(3, 4)
    view = npc.asarray(src).T
    src[0, 1] = -1
    print("\nzero-copy view of a NumPy array, transposed:")
    print(view)


if __name__ == "__main__":
    main()

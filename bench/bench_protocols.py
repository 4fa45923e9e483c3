"""Per-call overhead of ``numpy.*`` on npc arrays through the protocols, against NumPy on
NumPy arrays, for a 10-element float64 array (target: at most 3x NumPy).

``numpy.sin(npc_array)`` goes NumPy's ufunc override check -> npc.ndarray.__array_ufunc__
-> npc's native ufunc (or the fallback: zero-copy NumPy views); ``numpy.concatenate`` goes
through __array_function__. Run: ``python bench/bench_protocols.py [--json]``.
"""
import json
import sys
import time
import timeit

import numpy as np

import npc

N = 10


def cases():
    x, y = np.linspace(0.1, 1.0, N), np.linspace(1.0, 2.0, N)
    a, b = npc.asarray(x.copy()), npc.asarray(y.copy())
    return [
        ("numpy.sin(x)", lambda: np.sin(x), lambda: np.sin(a)),
        ("numpy.add(x, y)", lambda: np.add(x, y), lambda: np.add(a, b)),
        ("numpy_array + x", lambda: y + x, lambda: y + a),
        ("numpy.add.reduce(x)", lambda: np.add.reduce(x), lambda: np.add.reduce(a)),
        ("numpy.sum(x)", lambda: np.sum(x), lambda: np.sum(a)),
        ("numpy.concatenate([x, y])", lambda: np.concatenate([x, y]), lambda: np.concatenate([a, b])),
        ("numpy.where(x > 0.5, x, y)", lambda: np.where(x > 0.5, x, y), lambda: np.where(a > 0.5, a, b)),
        ("numpy.asarray(x)", lambda: np.asarray(x), lambda: np.asarray(a)),
    ]


def best_ns(fn, number=2000, repeat=7):
    # CPU time of this process: steadier than wall time on a shared machine.
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=time.process_time)) / number * 1e9


def routing_only():
    """Cost of the protocols alone: npc's native implementation replaced by a stand-in that
    returns its first argument, so what remains is NumPy's override dispatch plus npc's
    routing by name (what a native kernel adds comes on top)."""
    x, y = np.linspace(0.1, 1.0, N), np.linspace(1.0, 2.0, N)
    a, b = npc.asarray(x.copy()), npc.asarray(y.copy())
    ns = vars(npc)
    saved = {k: ns.get(k) for k in ("sin", "add", "concatenate")}

    class StandIn:
        def __call__(self, first, *args, **kwargs):
            return first

        def reduce(self, first, *args, **kwargs):
            return first

    try:
        ns["sin"], ns["add"] = StandIn(), StandIn()
        ns["concatenate"] = lambda arrays, *args, **kwargs: arrays[0]
        rows = [("routing: numpy.sin(x)", lambda: np.sin(x), lambda: np.sin(a)),
                ("routing: numpy.add(x, y)", lambda: np.add(x, y), lambda: np.add(a, b)),
                ("routing: numpy_array + x", lambda: y + x, lambda: y + a),
                ("routing: numpy.add.reduce(x)", lambda: np.add.reduce(x), lambda: np.add.reduce(a)),
                ("routing: numpy.concatenate", lambda: np.concatenate([x, y]), lambda: np.concatenate([a, b]))]
        return [(name, best_ns(f_np), best_ns(f_npc)) for name, f_np, f_npc in rows]
    finally:
        for k, v in saved.items():
            if v is None:
                ns.pop(k, None)
            else:
                ns[k] = v


def main():
    rows = []
    for name, f_np, f_npc in cases():
        native = not npc._fallback.is_fallback(getattr(npc, name.split("(")[0].split(".")[-1], None))
        t_np, t_npc = best_ns(f_np), best_ns(f_npc)
        rows.append({"call": name + ("" if native else " [fallback]"), "numpy_ns": round(t_np),
                     "npc_ns": round(t_npc), "ratio": round(t_npc / t_np, 2)})
    for name, t_np, t_npc in routing_only():
        rows.append({"call": name, "numpy_ns": round(t_np), "npc_ns": round(t_npc), "ratio": round(t_npc / t_np, 2)})
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'call (10 float64)':44s} {'numpy ns':>9s} {'npc ns':>9s} {'ratio':>6s}")
    for r in rows:
        print(f"{r['call']:44s} {r['numpy_ns']:9d} {r['npc_ns']:9d} {r['ratio']:6.2f}")


if __name__ == "__main__":
    main()

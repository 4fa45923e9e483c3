"""Per-call overhead of ``numpy.*`` on npc arrays through the protocols, against NumPy on
NumPy arrays, for a 10-element float64 array (target: at most 3x NumPy).

``numpy.sin(npc_array)`` goes NumPy's ufunc override check -> npc.ndarray.__array_ufunc__
-> npc's native ufunc (or the fallback: zero-copy NumPy views); ``numpy.concatenate`` goes
through __array_function__. Run: ``python bench/bench_protocols.py [--json] [--no-write]``; updates its section of
bench/RESULTS.md.
"""
import json
import os
import sys
import time
import timeit

import numpy as np

import npc
from _results import write_section

N = 10


def cases():
    x, y = np.linspace(0.1, 1.0, N), np.linspace(1.0, 2.0, N)
    a, b = npc.asarray(x.copy()), npc.asarray(y.copy())
    # (label, npc name that serves the call, NumPy call, same call on npc arrays)
    return [
        ("numpy.sin(x)", "sin", lambda: np.sin(x), lambda: np.sin(a)),
        ("numpy.add(x, y)", "add", lambda: np.add(x, y), lambda: np.add(a, b)),
        ("numpy_array + x", "add", lambda: y + x, lambda: y + a),
        ("numpy.add.reduce(x)", "add", lambda: np.add.reduce(x), lambda: np.add.reduce(a)),
        ("numpy.sum(x)", "sum", lambda: np.sum(x), lambda: np.sum(a)),
        ("numpy.concatenate([x, y])", "concatenate", lambda: np.concatenate([x, y]), lambda: np.concatenate([a, b])),
        ("numpy.where(x > 0.5, x, y)", "where", lambda: np.where(x > 0.5, x, y), lambda: np.where(a > 0.5, a, b)),
        ("numpy.asarray(x)", "asarray", lambda: np.asarray(x), lambda: np.asarray(a)),
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


def buffer_floor_ns():
    """numpy.asarray of a memoryview over a NumPy array: NumPy's own buffer-protocol path,
    which numpy.asarray(npc_array) takes too (NumPy tries the buffer protocol before the other
    array protocols), so no exporter can be cheaper than this."""
    m = memoryview(np.linspace(0.1, 1.0, N))
    return best_ns(lambda: np.asarray(m))


def main():
    rows = []
    for name, npc_name, f_np, f_npc in cases():
        native = not npc._fallback.is_fallback(getattr(npc, npc_name))
        t_np, t_npc = best_ns(f_np), best_ns(f_npc)
        rows.append({"call": name + ("" if native else " [fallback]"), "numpy_ns": round(t_np),
                     "npc_ns": round(t_npc), "ratio": round(t_npc / t_np, 2)})
    for name, t_np, t_npc in routing_only():
        rows.append({"call": name, "numpy_ns": round(t_np), "npc_ns": round(t_npc), "ratio": round(t_npc / t_np, 2)})
    floor = buffer_floor_ns()
    if "--json" in sys.argv:
        print(json.dumps({"rows": rows, "buffer_floor_ns": round(floor)}, indent=1))
        return
    print(f"{'call (10 float64)':44s} {'numpy ns':>9s} {'npc ns':>9s} {'ratio':>6s}")
    for r in rows:
        print(f"{r['call']:44s} {r['numpy_ns']:9d} {r['npc_ns']:9d} {r['ratio']:6.2f}")
    print(f"numpy.asarray(memoryview of a NumPy array): {floor:.0f} ns (NumPy's buffer path, the floor of asarray)")
    if "--no-write" not in sys.argv:
        write_results(rows, floor)


def write_results(rows, floor):
    """Replaces this script's section of bench/RESULTS.md."""
    lines = ["## Protocol overhead (bench/bench_protocols.py)", "",
             f"Command: `python bench/bench_protocols.py` (2 shared cores, load average "
             f"{os.getloadavg()[0]:.1f} at the end; NumPy {np.__version__}). "
             "Per call, 10-element float64 arrays, CPU time, best of 7 (target: npc <= 3x NumPy). "
             "[fallback] rows run NumPy on zero-copy views; routing rows isolate the protocols "
             "(native implementation replaced by a stand-in returning its input).", "",
             "| call | NumPy ns | npc ns | ratio |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| `{r['call']}` | {r['numpy_ns']} | {r['npc_ns']} | {r['ratio']:.2f} |" for r in rows]
    t_np = next(r["numpy_ns"] for r in rows if r["call"].startswith("numpy.asarray"))
    lines += ["", f"`numpy.asarray(npc_array)` takes NumPy's buffer-protocol path (NumPy tries it before "
              "`__array_struct__`, `__array_interface__` and `__array__`; the export wraps a memoryview that "
              "becomes the NumPy array's base). That path costs NumPy itself "
              f"{floor:.0f} ns ({floor / t_np:.2f}x its `numpy.asarray(numpy_array)`) on a ready memoryview of a "
              "NumPy array, so the 3x target is below what any non-NumPy exporter can reach; npc's part "
              "(the memoryview plus its export, no allocation: Note [buffer exports]) is the difference."]
    write_section("bench_protocols", lines)


if __name__ == "__main__":
    main()

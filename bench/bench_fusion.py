"""Fused backend vs NumPy vs hand-written C++/OpenMP kernels on the five demo cases.

    .venv/bin/python bench/bench_fusion.py          # full sizes (what bench/RESULTS.md records)
    .venv/bin/python bench/bench_fusion.py --small  # quick run

The hand-written kernels (bench/handwritten/kernels.cpp) are compiled with the fused
backend's own flags, so the comparison measures code generation, not compiler settings.
bench/demo.py (`make demo`) uses the same measurements.
"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fusion_cases as C  # noqa: E402
from _results import write_section  # noqa: E402

FLAGS = ["-O3", "-march=native", "-fopenmp", "-ffp-contract=off", "-shared", "-fPIC"]


def best_time(fn, repeat=7, min_total=0.5):
    """Best wall time of fn() over `repeat` runs (more when each run is short)."""
    fn()
    times = []
    t_end = time.perf_counter() + min_total
    while len(times) < repeat or (time.perf_counter() < t_end and len(times) < 200):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


# ---------------------------------------------------------------- hand-written kernels
_HW = None


def handwritten():
    """ctypes library of bench/handwritten/kernels.cpp (built into bench/out/), or None."""
    global _HW
    if _HW is not None:
        return _HW or None
    src = os.path.join(HERE, "handwritten", "kernels.cpp")
    out_dir = os.path.join(HERE, "out")
    os.makedirs(out_dir, exist_ok=True)
    so = os.path.join(out_dir, "handwritten.so")
    try:
        if not os.path.exists(so) or os.path.getmtime(so) < os.path.getmtime(src):
            cxx = os.environ.get("CXX", "c++").split()
            subprocess.run(cxx + FLAGS + ["-o", so, src], check=True, capture_output=True)
        _HW = ctypes.CDLL(so)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"hand-written kernels unavailable: {e}", file=sys.stderr)
        _HW = False
        return None
    return _HW


def _p(a):
    return ctypes.c_void_p(a.ctypes.data)


def handwritten_runner(case, args):
    """A no-argument callable running the hand-written kernel on `args`, and its result getter."""
    hw = handwritten()
    if hw is None:
        return None
    i64 = ctypes.c_int64
    if case == 1:
        X, Y = args
        out = np.empty(X.shape[0])
        return (lambda: hw.hw_outer_sum(_p(X), _p(Y), _p(out), i64(X.shape[0]), i64(X.shape[1]))), lambda: out
    if case == 2:
        X, means = args
        out = np.empty(X.shape[0], dtype=np.int64)
        return (lambda: hw.hw_kmeans(_p(X), _p(means), _p(out), i64(X.shape[0]))), lambda: out
    if case == 3:
        a, b = args
        out = np.empty(a.shape[0], dtype=bool)
        return (lambda: hw.hw_chain(_p(a), _p(b), _p(out), i64(a.shape[0]))), lambda: out
    if case == 4:
        (x,) = args
        out = np.empty_like(x)
        cols = x.shape[-1]
        return (lambda: hw.hw_softmax(_p(x), _p(out), i64(x.size // cols), i64(cols))), lambda: out
    if case == 5:
        (u0,) = args
        u = u0.copy()
        tmp = np.empty_like(u)

        def run():
            u[...] = u0
            hw.hw_jacobi(_p(u), _p(tmp), i64(u.shape[0]), i64(50))
        return run, lambda: u
    return None


# ---------------------------------------------------------------- npc
def _to_numpy(a):
    from npc._array import _numpy_view
    return np.asarray(_numpy_view(a)) if not isinstance(a, np.ndarray) else a


def npc_runner(case, args, mode):
    """(run, result, compile_seconds, kernels, launches) for the case through npc.

    mode "compile": npc.compile on the NumPy function (the tracer in front of the fused
    backend); mode "graph": the case's graph built directly (fusion_cases.graph)."""
    import npc
    from npc import _core
    from npc._array import _from_numpy
    s0 = _core._fusion_stats()
    t = time.perf_counter()
    if mode == "compile":
        f = npc.compile(C.NUMPY[case], backend="fused")
        res = f(*args)
        compile_s = time.perf_counter() - t
        breaks = list(getattr(f, "last_breaks", []) or [])
        if breaks:
            raise GraphBreaks(breaks)
        run = lambda: f(*args)  # noqa: E731
        result = lambda: np.asarray(f(*args))  # noqa: E731
    else:
        g, scalars = C.graph(case, args)
        exe = g.compile()
        compile_s = time.perf_counter() - t
        wrapped = [_from_numpy(np.ascontiguousarray(a)) for a in args]
        run = lambda: exe(wrapped, scalars)  # noqa: E731
        result = lambda: _to_numpy(exe(wrapped, scalars)[0])  # noqa: E731
        res = None
    s1 = _core._fusion_stats()
    del res
    # Loop nests per lowered graph (the tracer lowers each graph once: its first run's
    # executable becomes the cache entry's).
    kernels = (s1["kernels"] - s0["kernels"]) // max(1, s1["graphs"] - s0["graphs"])
    return run, result, compile_s, kernels, s1


class GraphBreaks(Exception):
    """npc.compile split the case into several graphs (the reasons are the args)."""


def npc_mode():
    """"compile" when npc.compile with the fused backend runs the cases, else "graph"."""
    try:
        import npc
        f = npc.compile(C.chain, backend="fused")
        a, b = np.linspace(0, 1, 17), np.linspace(1, 0, 17)
        r = f(a, b)
        if np.array_equal(np.asarray(r), C.chain(a, b)):
            return "compile"
    except Exception:  # noqa: BLE001 - any failure means the tracer front end is not ready
        pass
    return "graph"


WARM_SCRIPT = r"""
import sys, time, json
sys.path.insert(0, {here!r})
t0 = time.perf_counter()
import numpy as np, npc
from npc import _core
import fusion_cases as C
t_import = time.perf_counter() - t0
case, mode = {case}, {mode!r}
args, _ = C.inputs(case)
t = time.perf_counter()
if mode == "compile":
    f = npc.compile(C.NUMPY[case], backend="fused")
    f(*args)
    dt = time.perf_counter() - t
    replays = []
    for _ in range(3):
        t = time.perf_counter()
        f(*args)
        replays.append(time.perf_counter() - t)
    dt -= min(replays)  # the first call minus a replay (best of 3): trace + codegen + load
else:
    g, s = C.graph(case, args)
    g.compile()
    dt = time.perf_counter() - t
print(json.dumps({{"seconds": dt, "stats": _core._fusion_stats(), "import": t_import}}))
"""


def warm_start(case, mode, cache_dir):
    """Seconds to get the compiled case in a new process whose disk cache holds it."""
    env = dict(os.environ, NPC_CACHE_DIR=cache_dir)
    r = subprocess.run([sys.executable, "-c", WARM_SCRIPT.format(here=HERE, case=case, mode=mode)],
                       capture_output=True, text=True, env=env, timeout=300)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1:] or ["failed"]
    d = json.loads(r.stdout.strip().splitlines()[-1])
    return d, None


def measure(case, mode, small=False, cache_dir=None):
    """All figures of one case (dict)."""
    from npc import _core
    args, _ = C.inputs(case, small)
    row = {"case": case, "name": C.NAMES[case], "mode": mode}
    ref = C.NUMPY[case](*args)
    row["numpy_s"] = best_time(lambda: C.NUMPY[case](*args))
    cache_dir = cache_dir or tempfile.mkdtemp(prefix="npc-demo-cache-")
    import npc
    old = (npc.config.cache_dir, npc.config.codegen_errors)
    npc.config.cache_dir, npc.config.codegen_errors = cache_dir, "raise"
    try:
        try:
            run, result, compile_s, kernels, stats = npc_runner(case, args, mode)
        except GraphBreaks as e:
            reason = str(e.args[0][0]).split(" at ")[0]
            row["note"] = f"npc.compile breaks the graph ({reason}); measured on the graph IR directly"
            row["mode"] = mode = "graph"
            run, result, compile_s, kernels, stats = npc_runner(case, args, mode)
        row["cold_compile_s"] = compile_s
        row["kernels"] = kernels
        row["library_calls"] = C.LIBRARY_CALLS.get(case, 0)
        out = result()
        row["dtype_ok"] = out.dtype == ref.dtype and out.shape == ref.shape
        diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
        row["max_abs_diff"] = float(diff.max()) if diff.size else 0.0
        import npc
        npc.reset_peak_memory_stats()
        base = npc.memory_stats()["current_bytes"]
        keep = run()
        row["peak_extra_bytes"] = npc.memory_stats()["peak_bytes"] - base - out.nbytes
        del keep
        row["npc_s"] = best_time(run)
        hw = handwritten_runner(case, args)
        if hw is not None:
            hrun, hres = hw
            hrun()
            row["hw_diff"] = float(np.abs(hres().astype(np.float64) - ref.astype(np.float64)).max())
            row["hw_s"] = best_time(hrun)
        warm, err = warm_start(case, mode, cache_dir) if not small else (None, None)
        if warm is not None:
            row["warm_s"] = warm["seconds"]
            row["warm_disk_hits"] = warm["stats"]["disk_hits"]
            row["warm_compiles"] = warm["stats"]["compiles"]
        elif err:
            row["warm_error"] = err[0]
    finally:
        npc.config.cache_dir, npc.config.codegen_errors = old
    return row


def write_results(rows, command):
    """Replaces the "fusion" section of bench/RESULTS.md with `rows` (from measure())."""
    load = os.getloadavg()[0]
    lines = ["## fusion: NumPy code compiled into fused kernels (bench/demo.py, bench/bench_fusion.py)", "",
             f"Command: `{command}`. {os.cpu_count()} cores, load average {load:.1f} while measuring "
             "(the machine is shared, so ratios move between runs). Times are the best of several "
             "runs; hand = bench/handwritten/kernels.cpp built with the same flags; cold compile = "
             "trace + codegen + C++ compile with an empty cache; warm start = the same in a new "
             "process that finds the kernels in the disk cache (first call minus the best of 3 replays).", "",
             "| case | front end | kernels | max abs diff | NumPy ms | npc ms | speedup | hand ms | npc vs hand "
             "| cold compile ms | warm start ms |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        hw = r.get("hw_s")
        warm = r.get("warm_s")
        kern = f"{r['kernels']}" + (f" + {r['library_calls']} matmul" if r.get("library_calls") else "")
        hand_ms = f"{hw * 1e3:.2f}" if hw else "-"  # no hand-written kernel for the library-call case
        hand_pct = f"{hw / r['npc_s'] * 100:.0f}%" if hw else "-"
        lines.append(f"| {r['name']} | {'npc.compile' if r['mode'] == 'compile' else 'graph IR'} | {kern} "
                     f"| {r['max_abs_diff']:.2e} | {r['numpy_s'] * 1e3:.2f} | {r['npc_s'] * 1e3:.2f} "
                     f"| {r['numpy_s'] / r['npc_s']:.1f}x | {hand_ms} | {hand_pct} | {r['cold_compile_s'] * 1e3:.0f} "
                     f"| {warm * 1e3 if warm is not None else float('nan'):.1f} |")
    for r in rows:
        if r.get("note"):
            lines += ["", f"Case {r['case']}: {r['note']}."]
        if r["case"] == 1:
            lines += ["", f"Case 1 peak npc memory beyond inputs and output: {r['peak_extra_bytes'] / 1e6:.3f} MB "
                          "(NumPy materialises a 33.6 MB (1024, 64, 64) temporary)."]
    write_section("bench_fusion", lines)


def main():
    small = "--small" in sys.argv
    mode = npc_mode()
    print(f"npc front end: {'npc.compile' if mode == 'compile' else 'graph built directly (npc.compile not ready)'}")
    print(f"{'case':32} {'numpy ms':>9} {'npc ms':>8} {'hand ms':>8} {'vs numpy':>9} {'vs hand':>8}")
    rows = []
    for case in (1, 2, 3, 4, 5, 7):
        r = measure(case, mode, small)
        rows.append(r)
        hw = r.get("hw_s")
        print(f"{r['name']:32} {r['numpy_s'] * 1e3:9.2f} {r['npc_s'] * 1e3:8.2f} "
              f"{(hw or float('nan')) * 1e3:8.2f} {r['numpy_s'] / r['npc_s']:8.1f}x "
              f"{(hw / r['npc_s'] * 100 if hw else float('nan')):7.0f}%")
    if not small:
        write_results(rows, ".venv/bin/python bench/bench_fusion.py")


if __name__ == "__main__":
    main()

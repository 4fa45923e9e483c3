"""`make demo`: NumPy code compiled by npc into fused OpenMP kernels, on NumPy inputs.

Prints one row per case: fused kernel count, max abs difference vs NumPy, NumPy time, npc
time, speedup, hand-written C++ time, cold compile time (trace + codegen + C++ compile, empty
disk cache) and warm start (a new process that finds the kernels in the disk cache).
Case 6 shows npc.explain on a function with graph breaks; case 7 is an MLP layer, a BLAS
matmul whose epilogue (+ b, relu) is one fused kernel (`kernels` counts generated kernels,
`+1 lib` the library call).

The demo never crashes: a piece that is not available in this build is reported in the
table and the rest runs. Options: --small (small inputs, quick), --cases 1,3 (a subset).
"""
import os
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402


def fmt_ms(s):
    return "-" if s is None else (f"{s * 1e3:.2f}" if s < 1 else f"{s:.2f} s")


def run_cases(cases, small):
    import bench_fusion as B
    mode = B.npc_mode()
    front = "npc.compile(fn, backend='fused')" if mode == "compile" else \
        "graph IR built directly (npc.compile front end not available in this build)"
    print(f"front end: {front}")
    print(f"threads: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'default')}, "
          f"cores={os.cpu_count()}, load average={os.getloadavg()[0]:.1f}\n")
    head = (f"{'case':31} {'kernels':>7} {'max|diff|':>10} {'numpy ms':>9} {'npc ms':>8} {'speedup':>8} "
            f"{'hand ms':>8} {'npc/hand':>8} {'cold compile':>12} {'warm start':>10}")
    print(head)
    print("-" * len(head))
    rows = []
    cache_dir = tempfile.mkdtemp(prefix="npc-demo-cache-")
    for case in cases:
        try:
            r = B.measure(case, mode, small, cache_dir=os.path.join(cache_dir, str(case)))
        except Exception as e:  # noqa: BLE001 - the demo reports, never crashes
            import fusion_cases as C
            print(f"{C.NAMES[case]:31} not available: {type(e).__name__}: {str(e).splitlines()[0][:80]}")
            if os.environ.get("NPC_DEMO_DEBUG"):
                traceback.print_exc()
            continue
        rows.append(r)
        hw = r.get("hw_s")
        warm = r.get("warm_s")
        kern = f"{r['kernels']}" + (f"+{r['library_calls']} lib" if r.get("library_calls") else "")
        print(f"{r['name'][:30] + ('*' if r['mode'] == 'graph' and mode == 'compile' else ''):31} {kern:>7} {r['max_abs_diff']:10.2e} {r['numpy_s'] * 1e3:9.2f} "
              f"{r['npc_s'] * 1e3:8.2f} {r['numpy_s'] / r['npc_s']:7.1f}x "
              f"{(hw * 1e3 if hw else float('nan')):8.2f} {(hw / r['npc_s'] * 100 if hw else float('nan')):7.0f}% "
              f"{r['cold_compile_s'] * 1e3:9.0f} ms {(f'{warm * 1e3:7.1f} ms' if warm is not None else r.get('warm_error', '-')[:10]):>10}")
    print()
    if not small and len(rows) == len(cases) and set(cases) >= {1, 2, 3, 4, 5}:
        B.write_results(rows, "make demo")
        print("figures recorded in bench/RESULTS.md (section fusion)")
    for r in rows:
        if r.get("note"):
            print(f"case {r['case']}: {r['note']}")
        if r["case"] == 1:
            print(f"case 1 peak npc memory beyond inputs and output: {r['peak_extra_bytes'] / 1e6:.3f} MB "
                  f"(the (1024, 64, 64) float64 intermediate NumPy builds is {1024 * 64 * 64 * 8 / 1e6:.1f} MB)")
        if r.get("max_abs_diff", 0) > 1e-3 or not r.get("dtype_ok", True):
            print(f"case {r['case']}: result differs from NumPy (diff {r['max_abs_diff']}, dtype/shape ok: {r['dtype_ok']})")
    return rows


def explain_case():
    print("\ncase 6: npc.explain on a function with a print and a data-dependent if")
    import npc

    def f(x):
        y = np.sin(x) * 2.0
        print("y.max() =", y.max())  # printing an array value needs it: graph break
        if y.sum() > 0:             # needs a concrete value: graph break
            y = y + 1.0
        return np.cos(y)

    explain = getattr(npc, "explain", None)
    if explain is None:
        print("  npc.explain is not available in this build (tracer front end not merged)")
        return
    try:
        report = explain(f)(np.linspace(0.0, 1.0, 1000))
        print("  " + str(report).replace("\n", "\n  "))
    except Exception as e:  # noqa: BLE001
        print(f"  npc.explain failed: {type(e).__name__}: {e}")


def main():
    small = "--small" in sys.argv
    cases = [1, 2, 3, 4, 5, 7]
    for a in sys.argv[1:]:
        if a.startswith("--cases"):
            cases = [int(c) for c in a.split("=", 1)[1].split(",")]
    print("npc demo: NumPy code compiled into fused C++/OpenMP kernels\n")
    try:
        import npc  # noqa: F401
    except Exception as e:  # noqa: BLE001
        print(f"npc failed to import: {e}")
        return 0
    try:
        run_cases([c for c in cases if c != 6], small)
    except Exception as e:  # noqa: BLE001
        print(f"benchmark cases failed: {type(e).__name__}: {e}")
    if 6 in cases or set(cases) >= {1, 2, 3, 4, 5}:
        try:
            explain_case()
        except Exception as e:  # noqa: BLE001
            print(f"  case 6 failed: {type(e).__name__}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

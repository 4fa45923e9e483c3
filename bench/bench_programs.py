"""The real-programs suite (bench/programs/): for each program and size, NumPy's time, npc
eager's and npc.compile's speed as ratios to NumPy measured in the same process (interleaved
rounds, medians), the first call of the compiled function on a cold and on a warm disk cache
(the median of WARM_RUNS processes), kernels compiled and run, graph breaks; geometric means
per mode and size.

Each measurement runs in a subprocess with a time limit, so a program that compiles for
minutes is reported as a time-out instead of stalling the run. Usage:

    python bench/bench_programs.py [--sizes S,M] [--only name,...] [--modes eager,compiled] [--write]
"""
import argparse
import json
import math
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LIMITS = {"eager": 180, "compiled": 180, "warm": 90}  # seconds per subprocess
BUDGET = 1.5  # seconds of timed calls per system
WARM_RUNS = 3  # processes timing the first call on a warm disk cache (median)


def _rounds(t):
    return int(min(15, max(3, BUDGET / max(t, 1e-6))))


def _time_interleaved(systems, rounds):
    """Median seconds per call of each (name, call, setup) system, round-robin."""
    ts = {name: [] for name, _, _ in systems}
    for _ in range(rounds):
        for name, call, setup in systems:
            args = setup()
            t0 = time.perf_counter()
            call(*args)
            ts[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in ts.items()}


def _decided(cf):
    """Whether the timed calls of `cf` (npc.compile's Note [slow graph breaks]: calls after the
    first alternate between the compiled code and eager runs until one is chosen) are over."""
    timings = [t for cands in cf._entries.values() for e in cands for t in (getattr(e, "timing", None) or [])]
    timings += list(cf._break_timing.values())
    return all(t.mode is not None for t in timings)


def _settle(cf, make_args, limit=16):
    """Calls `cf` until its mode is chosen: the timed rounds then measure what a program's
    later calls run, not the eager probes of the choice (a few rounds of a slow program would
    otherwise be mostly probes)."""
    for _ in range(limit):
        if _decided(cf):
            return
        cf(*make_args())


def worker(name, size, mode):
    import numpy
    import bench.programs as bp
    from bench.programs import harness as h
    prog = bp.load()[name]
    args = prog.init(prog.sizes[size], numpy.random.default_rng(0))
    t0 = time.perf_counter()
    ref = prog.fn(*h.copy_args(args))
    t_np = time.perf_counter() - t0
    out = {}
    if mode == "eager":
        fn = h.eager_variant(prog.fn)
        got = fn(*h.as_npc(h.copy_args(args)))
        out["wrong"] = h.mismatch(ref, got)
        systems = [("numpy", prog.fn, lambda: h.copy_args(args))]
        if not out["wrong"]:
            systems.append(("npc", fn, lambda: h.as_npc(h.copy_args(args))))
        out["times"] = _time_interleaved(systems, _rounds(t_np))
        return out
    import npc
    cf = npc.compile(prog.fn)
    t0 = time.perf_counter()
    got = cf(*h.copy_args(args))
    out["first_call"] = time.perf_counter() - t0
    if mode == "warm":
        return out
    st = npc.compiler.stats()
    out["kernels_compiled"] = st.get("kernels_compiled", 0)
    out["graph_breaks"] = st.get("graph_breaks", 0)
    out["wrong"] = h.mismatch(ref, got)
    # A second call: the replay must give the same validated result.
    if not out["wrong"]:
        out["wrong"] = h.mismatch(ref, cf(*h.copy_args(args)))
    systems = [("numpy", prog.fn, lambda: h.copy_args(args))]
    if not out["wrong"]:
        systems.append(("npc", cf, lambda: h.copy_args(args)))
        _settle(cf, lambda: h.copy_args(args))
    before = npc.compiler.stats().get("kernels_run", 0)
    out["times"] = _time_interleaved(systems, _rounds(t_np))
    out["kernels_run_per_call"] = (npc.compiler.stats().get("kernels_run", 0) - before) / _rounds(t_np)
    return out


def run_sub(name, size, mode, cache_dir):
    env = dict(os.environ, NPC_CACHE_DIR=cache_dir)
    cmd = [sys.executable, __file__, "--worker", name, size, mode]
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=LIMITS[mode])
    except subprocess.TimeoutExpired:
        return {"error": f"timeout {LIMITS[mode]} s"}
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        return {"error": last[:120]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_eager(name, size, runs):
    """The eager measurement `runs` times (separate processes): the median of each system's
    per-run median time, so one run disturbed by other load on the machine does not decide."""
    results = [run_sub(name, size, "eager", tempfile.mkdtemp(prefix="npc-bench-")) for _ in range(runs)]
    bad = [r for r in results if "error" in r or r.get("wrong")]
    if bad or runs == 1:
        return (bad or results)[0]
    times = {k: statistics.median(r["times"][k] for r in results) for k in results[0]["times"]}
    return {"wrong": None, "times": times, "runs": runs}


def measure(name, size, modes=("eager", "compiled"), runs=1):
    row = {"name": name, "size": size}
    skipped = {"error": "not run"}
    row["eager"] = run_eager(name, size, runs) if "eager" in modes else skipped
    row["compiled"] = skipped
    if "compiled" in modes:
        cache = tempfile.mkdtemp(prefix="npc-bench-")
        row["compiled"] = run_sub(name, size, "compiled", cache)
        if "error" not in row["compiled"]:
            # A warm first call is one sample per process: the median of WARM_RUNS processes.
            warms = [run_sub(name, size, "warm", cache) for _ in range(WARM_RUNS)]
            firsts = [w["first_call"] for w in warms if "first_call" in w]
            row["warm"] = {"first_call": statistics.median(firsts)} if firsts else warms[0]
    return row


def _ratio(res):
    if "error" in res:
        return None, res["error"]
    if res.get("wrong"):
        return None, "wrong: " + res["wrong"]
    t = res["times"]
    return t["numpy"] / t["npc"], None


def _fmt_ratio(r, err):
    return f"{r:.2f}x" if r is not None else f"({err})"


def _geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def table(rows, size):
    lines = [f"Size {size} (NumPy about {'10' if size == 'S' else '100'} ms):", "",
             "| program | NumPy ms | npc eager | npc.compile | first call s (cold / warm cache) | kernels compiled | kernels per call | graph breaks |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    eager_r, comp_r = [], []
    for row in rows:
        if row["size"] != size:
            continue
        e, c = row["eager"], row["compiled"]
        re_, ee = _ratio(e)
        rc, ec = _ratio(c)
        eager_r.append(re_)
        comp_r.append(rc)
        np_ms = (e.get("times") or c.get("times") or {}).get("numpy")
        np_ms = f"{np_ms * 1e3:.1f}" if np_ms else "-"
        first = "-"
        if "first_call" in c:
            warm = row.get("warm", {}).get("first_call")
            first = f"{c['first_call']:.2f} / " + (f"{warm:.2f}" if warm is not None else "-")
        kc = c.get("kernels_compiled", "-")
        kr = c.get("kernels_run_per_call")
        kr = f"{kr:.0f}" if kr is not None else "-"
        lines.append(f"| {row['name']} | {np_ms} | {_fmt_ratio(re_, ee)} | {_fmt_ratio(rc, ec)} | {first} | {kc} | {kr} | "
                     f"{c.get('graph_breaks', '-')} |")
    def gm(xs):
        return f"**{_geomean(xs):.2f}x**" if any(xs) else "-"
    lines.append(f"| **geometric mean** (programs that ran and validated) | | {gm(eager_r)} | {gm(comp_r)} | | | | |")
    lines.append("")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=3)
    ap.add_argument("--sizes", default="S,M")
    ap.add_argument("--only", default="")
    ap.add_argument("--modes", default="eager,compiled",
                    help="npc modes to measure against NumPy: eager, compiled or both (default)")
    ap.add_argument("--runs", type=int, default=1,
                    help="eager measurements per program and size (separate processes; medians): "
                         "steadier figures on a loaded machine")
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(*a.worker)))
        return
    import bench.programs as bp
    names = [n for n in bp.load() if not a.only or n in a.only.split(",")]
    rows = []
    for size in a.sizes.split(","):
        for n in names:
            row = measure(n, size, a.modes.split(","), a.runs)
            rows.append(row)
            e, c = _ratio(row["eager"]), _ratio(row["compiled"])
            print(f"{size} {n:24s} eager {_fmt_ratio(*e):>12s} compiled {_fmt_ratio(*c):>12s} "
                  f"first {row['compiled'].get('first_call', float('nan')):.2f}s", flush=True)
    out = []
    for size in a.sizes.split(","):
        out += table(rows, size)
    print("\n".join(out))
    if a.write:
        from _results import write_section
        load = os.getloadavg()[0]
        modes = a.modes.split(",")
        both = set(modes) == {"eager", "compiled"}
        cmd = "python bench/bench_programs.py" + ("" if a.sizes == "S,M" else f" --sizes {a.sizes}") + \
            ("" if both else f" --modes {a.modes}") + (f" --runs {a.runs}" if a.runs > 1 else "") + \
            (f" --only {a.only}" if a.only else "") + " --write"
        head = ["## Real programs (bench/bench_programs.py)" + ("" if both else f", {a.modes} only"), "",
                f"`{cmd}` on {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
                f"{os.cpu_count()} cores, load average {load:.1f} at the end. Ratios are NumPy time / npc time "
                "(higher is faster), medians of interleaved rounds in one process"
                + (f" (eager: the median of {a.runs} such processes)" if a.runs > 1 else "") + "; the first call on a warm "
                f"disk cache is the median of {WARM_RUNS} processes; a program whose result "
                "fails validation (allclose 1e-5/1e-8, else relative L2 < 1e-5) is reported as wrong and not "
                "timed; each mode runs in a subprocess with a time limit "
                f"({LIMITS['compiled']} s).", ""]
        # A run of one mode has its own section: it does not replace the full table.
        write_section("programs" if both else "programs-" + "-".join(modes), head + out)


if __name__ == "__main__":
    main()

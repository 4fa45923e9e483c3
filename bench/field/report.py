"""Writes the field suite's results (run.py's JSON) as section "field" of bench/RESULTS.md
and the chart bench/field.png.

    .venv-peers/bin/python bench/field/report.py bench/out/field.json
"""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]
from _results import write_section  # noqa: E402

LABELS = {"numpy": "NumPy", "npc_eager": "npc eager", "npc_compiled": "npc compiled", "numexpr": "NumExpr",
          "numba_numpy": "Numba (NumPy src)", "numba_loops": "Numba (loops)", "torch": "torch.compile",
          "jax": "JAX jit", "hand": "hand C++"}
PEERS = ["numexpr", "numba_numpy", "numba_loops", "torch", "jax", "hand"]

# Why npc is behind on a case, where it is known (keyed by case; shown beside the figures).
REASONS = {
    "thomas": "npc.compile unrolls the two Python loops over rows into one graph of ~10 ops per row; "
              "tracing and compiling it takes longer than the cap",
    "masked_mean": "boolean-mask indexing has a data-dependent shape: each iteration is a graph break "
                   "in npc.compile (and in torch.compile)",
    "cholesky": "a Python loop over rows: one graph of several ops per row, long to trace and compile; "
                "eager npc pays per-op dispatch like NumPy",
    "lu": "a Python loop over rows: one graph of several ops per row, long to trace and compile",
    "haversine": ("float64 sin and cos run the scalar libm loop by default in npc, eager and fused alike, "
                  "whose results are closer to NumPy's than libmvec's; arctan2 has no vector loop. Fused "
                  "kernels call the vector routines exactly where the eager loops do (Note [vector math in "
                  "kernels] in src/fusion/kir_vector_math.cpp): with NPC_VECTOR_MATH=all the case runs about "
                  "2.2x NumPy"),
    "normalise": ("the fused kernel walked a column per output element for the axis-0 mean and std "
                  "of the (n, 256) array, computing the mean twice (as measured here);"
                  " since then reductions over outer axes run in lane blocks "
                  "(Note [lane blocks] in src/fusion/kir_passes.cpp) and a keepdims mean is the same graph "
                  "node as the plain one"),
    "mlp": "the two matmuls dominate: npc calls the same OpenBLAS as NumPy and fuses only the "
           "epilogues; XLA's own matmul is faster at these shapes (not analysed further)",
    "eos": "not analysed yet (XLA is ahead on this pure polynomial; npc keeps NumPy's operation "
           "order and no FMA contraction)",
    "bool_chain": "not analysed yet (one memory-bound pass in every fused system)",
    "tiny": "per-call cost of the compiled function (guard checks, argument wrapping) against NumPy's "
            "few microseconds",
}


def _cell(r, base):
    st = r["status"]
    if r.get("time_s") and base:
        return f"{base / r['time_s']:.2f}"
    if st == "n/a":
        return "-"
    if st == "error":
        return "err: " + r.get("error", "").split(":")[0]
    return st


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def speedups(data, size, system):
    """case -> NumPy time / system time, for the cases where the system was timed."""
    out = {}
    for name, rec in data["results"].get(size, {}).items():
        base = rec["numpy"].get("time_s")
        t = rec.get(system, {}).get("time_s")
        if base and t:
            out[name] = base / t
    return out


def lines_for(data):
    systems = data["systems"]
    v = data["versions"]
    lb, la = data["load_before"], data["load_after"]
    L = ["## field: npc against NumPy, NumExpr, Numba, torch.compile, JAX and hand-written C++", "",
         f"Command: `make bench-peers` (`{data['command']}`), {data['date']}, {data['seconds'] / 60:.0f} min. "
         f"Machine: {data['machine']}. Every system runs with {data['threads']} threads "
         "(OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, NUMBA_NUM_THREADS, NUMEXPR_NUM_THREADS, "
         "torch.set_num_threads; XLA's CPU pool is sized by the 2 visible cores).",
         f"Load average (1, 5, 15 min) before: {lb[0]:.1f}, {lb[1]:.1f}, {lb[2]:.1f}; after: "
         f"{la[0]:.1f}, {la[1]:.1f}, {la[2]:.1f}: the machine is shared, so single figures move between "
         "runs (interleaved rounds keep the ratios of one case comparable).",
         "Versions: " + ", ".join(f"{k} {v[k]}" for k in sorted(v)) + ".", ""]
    if data.get("not_run"):
        L += ["Not run (the run's time limit, `--deadline`, was reached): " + ", ".join(data["not_run"]) + ".", ""]
    if data.get("start_errors"):
        L += ["Not available in this run: " + ", ".join(f"{LABELS.get(s, s)} ({e})" for s, e in
                                                          data["start_errors"].items()) + ".", ""]
    L += ["Method (bench/field/): each system runs in its own process; each case is written once in "
          "NumPy (cases.py) and run as written by NumPy, npc eager (`np` bound to npc), `npc.compile`, "
          "Numba `@njit(parallel=True)` and `torch.compile`; JAX (`jax.jit`, x64, functional updates), "
          "Numba explicit loops (`prange`) and NumExpr are ports (ports_*.py); hand C++ is "
          "bench/handwritten/kernels.cpp. The first call is the compile time (cold caches: "
          "fresh NPC_CACHE_DIR and TORCHINDUCTOR_CACHE_DIR; a trivial function is compiled first "
          "in each process so that one-time library start-up is not counted). Results are "
          "validated against NumPy (allclose(rtol=1e-5, atol=1e-8), else relative L2 < 1e-5); "
          f"then {data['rounds']} interleaved rounds of about {data['target_s'] * 1e3:.0f} ms per "
          "system, order rotating; the median per-call time is divided into NumPy's. "
          f"Any request over {data['cap_s']:.0f} s ends that system's worker: `timeout`. "
          "`err: X` = the system raised X (unsupported); `wrong` = failed validation "
          "(never timed); `-` = no such port. Peak memory: the process's resident high-water mark "
          "reset before one call (Note [peak memory] in worker.py).", ""]
    for size in data["results"]:
        res = data["results"][size]
        L += [f"### Speedup over NumPy, size \"{size}\" (NumPy about {size} per call; higher is better)", "",
              "| case | n | NumPy ms | " + " | ".join(LABELS[s] for s in systems if s != "numpy") + " |",
              "| --- | --- | ---: | " + " | ".join("---:" for s in systems if s != "numpy") + " |"]
        for name, rec in res.items():
            base = rec["numpy"].get("time_s")
            row = [name, f"{data['sizes'][name][size]}", f"{base * 1e3:.3f}" if base else rec["numpy"]["status"]]
            for s in systems:
                if s == "numpy":
                    continue
                c = _cell(rec.get(s, {"status": "-"}), base)
                if s == "npc_compiled" and rec.get(s, {}).get("breaks"):
                    c += f" ({rec[s]['breaks']} breaks)"
                row.append(c)
            L.append("| " + " | ".join(row) + " |")
        gm, cnt = [], []
        for s in systems:
            if s == "numpy":
                continue
            sp = speedups(data, size, s)
            gm.append(f"**{_geomean(list(sp.values())):.2f}**" if sp else "-")
            cnt.append(f"{len(sp)}/{len(res)}")
        L += ["| geometric mean (cases timed) | | | " + " | ".join(gm) + " |",
              "| cases timed | | | " + " | ".join(cnt) + " |", ""]
    L += compare_lines(data)
    L += compile_lines(data)
    L += memory_lines(data)
    return L


def compare_lines(data):
    """npc compiled against each peer: geomean over the cases both ran, and where npc is slower."""
    L = ["### npc compiled against each peer", "",
         "Geometric mean of (peer time / npc compiled time) over the cases both timed (above 1: npc "
         "compiled is faster), per size; the goal is above 1 for every peer on both sizes, and at "
         "least 0.8 against the hand-written kernels on every case that has one.", "",
         "| peer | " + " | ".join(f"{s}: geomean (cases)" for s in data["results"]) + " |",
         "| --- | " + " | ".join("---:" for _ in data["results"]) + " |"]
    slower = []
    for p in ["numpy", "npc_eager"] + PEERS:
        if p not in data["systems"]:
            continue
        cells = []
        for size in data["results"]:
            a = speedups(data, size, "npc_compiled")
            b = speedups(data, size, p)
            both = sorted(set(a) & set(b))
            cells.append(f"{_geomean([a[c] / b[c] for c in both]):.2f} ({len(both)})" if both else "-")
            for c in both:
                if a[c] < b[c] and p != "npc_eager":
                    slower.append((size, c, p, b[c] / a[c]))
        L.append(f"| {LABELS[p]} | " + " | ".join(cells) + " |")
    L.append("")
    if slower:
        L += ["Where npc compiled is slower than a peer (peer's speed / npc compiled's speed):", ""]
        by_case = {}
        for size, c, p, f in slower:
            by_case.setdefault((c, size), []).append(f"{LABELS[p]} {f:.1f}x")
        for (c, size), items in sorted(by_case.items()):
            why = REASONS.get(c)
            L.append(f"- {c} ({size}): " + ", ".join(items) + (f". Why: {why}." if why else "."))
        L.append("")
    failed = []
    for size, res in data["results"].items():
        for c, rec in res.items():
            r = rec.get("npc_compiled")
            if r and not r.get("time_s"):
                failed.append(f"{c} ({size}): {r['status']}" + (f" {r.get('error', '')}" if r['status'] != 'timeout' else "")
                              + (f"; {REASONS[c]}" if c in REASONS else ""))
    if failed:
        L += ["Where npc compiled has no time (counted nowhere in its geometric mean, so the mean "
              "above flatters it by those cases):", ""] + [f"- {f}" for f in failed] + [""]
    return L


def compile_lines(data):
    systems = [s for s in data["systems"] if s not in ("numpy", "numexpr", "hand")]
    L = ["### Compile time: first call minus a timed call, seconds (size 10ms / 100ms)", "",
         "| case | " + " | ".join(LABELS[s] for s in systems) + " |",
         "| --- | " + " | ".join("---:" for _ in systems) + " |"]
    sizes = list(data["results"])
    names = list(data["results"][sizes[0]])
    for name in names:
        row = [name]
        for s in systems:
            parts = []
            for size in sizes:
                r = data["results"][size].get(name, {}).get(s, {})
                if "compile_s" in r:
                    parts.append(f"{max(0.0, r['compile_s'] - r.get('time_s', 0.0)):.2f}")
                else:
                    parts.append({"n/a": "-"}.get(r.get("status"), r.get("status", "?")))
            row.append(" / ".join(parts))
        L.append("| " + " | ".join(row) + " |")
    return L + [""]


def memory_lines(data):
    size = list(data["results"])[-1]
    systems = data["systems"]
    L = [f"### Peak extra memory of one call, MB (size {size})", "",
         "| case | " + " | ".join(LABELS[s] for s in systems) + " |",
         "| --- | " + " | ".join("---:" for _ in systems) + " |"]
    for name, rec in data["results"][size].items():
        row = [name]
        for s in systems:
            b = rec.get(s, {}).get("peak_bytes")
            row.append(f"{b / 1e6:.1f}" if b is not None else "-")
        L.append("| " + " | ".join(row) + " |")
    return L + [""]


def plot(data, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    systems = [s for s in data["systems"] if s != "numpy"]
    sizes = list(data["results"])
    fig, axes = plt.subplots(len(sizes), 1, figsize=(16, 5 * len(sizes)), squeeze=False)
    cmap = plt.get_cmap("tab10")
    for ax, size in zip(axes[:, 0], sizes):
        names = list(data["results"][size])
        w = 0.85 / len(systems)
        for k, s in enumerate(systems):
            sp = speedups(data, size, s)
            xs = [i + (k - len(systems) / 2 + 0.5) * w for i, n in enumerate(names) if n in sp]
            ax.bar(xs, [sp[n] for n in names if n in sp], width=w, label=LABELS[s], color=cmap(k % 10))
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=30, ha="right")
        ax.set_ylabel("speedup over NumPy (log)")
        ax.set_title(f"size {size} (NumPy about {size} per call), {data['threads']} threads; missing bar = "
                     "not run, error, wrong or timeout")
        ax.legend(ncol=len(systems), fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def write(data):
    write_section("field", lines_for(data))
    plot(data, os.path.join(os.path.dirname(HERE), "field.png"))
    print("written: bench/RESULTS.md (section field), bench/field.png")


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        write(json.load(f))

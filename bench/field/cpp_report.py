"""Runs the C++ side of the field suite (bench/cpp/bench_field.cpp, Google Benchmark) and
records its table as section "field-cpp" of bench/RESULTS.md (with --write).

    .venv-peers/bin/python bench/field/cpp_report.py build-bench/bench/cpp/npc_bench_field [--write]
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from _results import write_section  # noqa: E402

ROWS = [("eager dispatch: a + b, 16 float64", "BM_eager_dispatch_npc", "BM_eager_dispatch_xtensor"),
        ("compiled replay: (a * b + 1).sum(), 16 float64", "BM_compiled_replay_npc", "BM_compiled_replay_xtensor"),
        ("fused kernel: haversine chain, 2M float64 (npc compiled)", "BM_fused_haversine_npc_compiled",
         "BM_fused_haversine_xtensor"),
        ("the same chain, npc eager (one kernel per op)", "BM_fused_haversine_npc_eager", "BM_fused_haversine_xtensor")]


def main():
    binary = sys.argv[1]
    if not os.path.exists(binary):
        print(f"{binary} was not built (Google Benchmark or xtensor missing); C++ side skipped")
        return 0
    env = dict(os.environ, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2",
               NPC_CACHE_DIR=tempfile.mkdtemp(prefix="npc-field-cpp-"))
    load0 = os.getloadavg()
    r = subprocess.run([binary, "--benchmark_format=json", "--benchmark_repetitions=5",
                        "--benchmark_report_aggregates_only=true"], capture_output=True, text=True, env=env, timeout=1200)
    if r.returncode != 0:
        print(r.stderr[-2000:])
        return 1
    data = json.loads(r.stdout)
    med = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
            med[b["run_name"]] = b["real_time"] * scale
    load1 = os.getloadavg()
    lines = ["## field-cpp: npc's C++ API beside xtensor (bench/cpp/bench_field.cpp, Google Benchmark)", "",
             f"Command: `make bench-peers` (`{os.path.relpath(binary)} --benchmark_repetitions=5`), "
             f"{datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}, "
             f"{data['context'].get('num_cpus')} CPUs, OMP_NUM_THREADS=2 (xtensor built with -O3 -march=native, "
             "xsimd and XTENSOR_USE_OPENMP). Load average before/after: "
             f"{load0[0]:.1f} / {load1[0]:.1f}. Median of 5 repetitions, wall time; below 1 in the last column: "
             "npc is faster.", "",
             "| benchmark | npc | xtensor | npc / xtensor |", "| --- | ---: | ---: | ---: |"]

    def fmt(s):
        return f"{s * 1e9:.0f} ns" if s < 1e-6 else (f"{s * 1e6:.2f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms")
    for label, a, b in ROWS:
        if a in med and b in med:
            lines.append(f"| {label} | {fmt(med[a])} | {fmt(med[b])} | {med[a] / med[b]:.2f} |")
    print("\n".join(lines))
    if "--write" in sys.argv:
        write_section("field-cpp", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The field suite: npc against NumPy, NumExpr, Numba, torch.compile, JAX and hand-written
C++ on the same cases, inputs and machine, in one run (`make bench-peers`).

    .venv-peers/bin/python bench/field/run.py                # full run, writes RESULTS.md + field.png
    .venv-peers/bin/python bench/field/run.py --quick        # few rounds, prints only
    .venv-peers/bin/python bench/field/run.py --cases softmax,lu --sizes 10ms --systems numpy,npc_compiled

Each system runs in its own worker process (worker.py), started once and kept for every
case, so imports are paid once and peak memory is per system. For each case and size: every
system runs the case once (its compile time: trace, code generation, JIT; reported apart), the
results are validated against NumPy (allclose(rtol=1e-5, atol=1e-8), else relative L2 error
below 1e-5; a wrong system is reported and never timed), then timing rounds interleave the
systems (each in turn, the order rotating each round), and the median per-call time of the
rounds is reported as a ratio to NumPy's in the same rounds. A worker that exceeds the time
cap is ended and reported as "timeout"; it is restarted for the next case.
"""
import argparse
import datetime
import json
import math
import os
import platform
import select
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]
import cases as C  # noqa: E402

SYSTEMS = ["numpy", "npc_eager", "npc_compiled", "numexpr", "numba_numpy", "numba_loops", "torch", "jax", "hand"]
LABELS = {"numpy": "NumPy", "npc_eager": "npc eager", "npc_compiled": "npc compiled", "numexpr": "NumExpr",
          "numba_numpy": "Numba (NumPy source)", "numba_loops": "Numba (loops)", "torch": "torch.compile",
          "jax": "JAX jit", "hand": "hand C++"}
THREADS = 2


def thread_env(tmp):
    """The environment of every worker: THREADS threads for every library, cold caches."""
    env = dict(os.environ)
    t = str(THREADS)
    env.update(OMP_NUM_THREADS=t, OPENBLAS_NUM_THREADS=t, MKL_NUM_THREADS=t, NUMBA_NUM_THREADS=t,
               NUMEXPR_NUM_THREADS=t, NUMEXPR_MAX_THREADS=t, FIELD_THREADS=t,
               # XLA's CPU client sizes its pools by the visible cores; 2 here (stated in the report).
               XLA_FLAGS=env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=1",
               JAX_PLATFORMS="cpu", CUDA_VISIBLE_DEVICES="",
               NPC_CACHE_DIR=os.path.join(tmp, "npc-cache"),
               TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "inductor-cache"),
               TRITON_CACHE_DIR=os.path.join(tmp, "triton-cache"),
               PYTHONWARNINGS="ignore")
    return env


class Worker:
    """A worker process for one system; every request has a time limit."""

    def __init__(self, system, env):
        self.system, self.env = system, env
        self.proc = None
        self.versions = {}
        self.start_error = None

    def start(self, timeout=300):
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "worker.py"), self.system],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=self.env, text=True, bufsize=1)
        r = self._read(timeout)
        if r is None or not r.get("ready"):
            self.start_error = "import failed" if r is None or r.get("status") != "timeout" else "import timeout"
            self.stop()
            return False
        self.versions = r.get("versions", {})
        return True

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
        self.proc = None

    def _read(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.stop()
            return {"status": "timeout"}
        line = self.proc.stdout.readline()
        if not line:
            self.stop()
            return None
        return json.loads(line)

    def ask(self, req, timeout):
        if not self.alive() and not self.start():
            return {"status": "error", "error": f"worker did not start ({self.start_error})"}
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            self.stop()
            return {"status": "error", "error": "worker died"}
        r = self._read(timeout)
        if r is None:
            return {"status": "error", "error": "crash (worker died)"}
        return r


def load(path):
    with np.load(path) as z:
        arrs = [z[f"arr_{i}"] for i in range(len(z.files))]
    return arrs


def validate(got, ref):
    """None when `got` matches `ref`, else the reason."""
    if len(got) != len(ref):
        return f"{len(got)} results, NumPy has {len(ref)}"
    for g, r in zip(got, ref):
        if g.shape != r.shape:
            return f"shape {g.shape}, NumPy {r.shape}"
        g64, r64 = g.astype(np.float64), r.astype(np.float64)
        if np.allclose(g64, r64, rtol=1e-5, atol=1e-8, equal_nan=True):
            continue
        finite = np.isfinite(r64)
        if not np.array_equal(finite, np.isfinite(g64)):
            return "non-finite values differ"
        den = np.linalg.norm(r64[finite])
        rel = np.linalg.norm((g64 - r64)[finite]) / (den if den else 1.0)
        if not rel < 1e-5:
            return f"relative L2 error {rel:.1e}"
    return None


def run_case(workers, name, size, opts, tmp):
    """Every system on one case and size: a dict system -> record."""
    rec = {}
    out = {}
    for s, w in workers.items():
        path = os.path.join(tmp, f"{s}-{name}-{size}.npz")
        r = w.ask({"op": "prepare", "case": name, "size": size, "out": path}, opts.cap)
        rec[s] = {"status": r["status"]}
        if r["status"] == "ok":
            rec[s]["compile_s"] = r["first_s"]
            if r.get("breaks"):
                rec[s]["breaks"] = r["breaks"]
            out[s] = path
        elif r["status"] == "error":
            rec[s]["error"] = r["error"]
        if opts.verbose and r["status"] not in ("ok", "n/a"):
            print(f"   {s}: {r['status']} {r.get('error', '')}", flush=True)
    if "numpy" not in out:
        return rec
    ref = load(out["numpy"])
    live = []
    for s, path in out.items():
        why = validate(load(path), ref) if s != "numpy" else None
        if why:
            rec[s]["status"], rec[s]["error"] = "wrong", why
            workers[s].ask({"op": "release"}, 30)
        else:
            live.append(s)
    # Calibration: calls per round so that a round lasts about opts.target seconds.
    number, first = {}, {}
    for s in list(live):
        r = workers[s].ask({"op": "time", "number": 1}, opts.cap)
        if r["status"] != "ok":
            rec[s]["status"], rec[s]["error"] = r["status"], r.get("error", "")
            live.remove(s)
            continue
        number[s] = max(1, min(10000, int(opts.target / max(r["s"], 1e-7))))
        first[s] = r["s"]
    # A call longer than a round counts as the first round (saves a slow system one call).
    times = {s: [first[s]] if number[s] == 1 else [] for s in live}
    spent = {s: 0.0 for s in live}
    for k in range(opts.rounds):
        if all(len(times[s]) > k for s in live):
            continue
        order = live[k % len(live):] + live[:k % len(live)] if live else []
        for s in order:
            if s not in live or spent[s] > opts.cap or len(times[s]) > k:
                continue
            r = workers[s].ask({"op": "time", "number": number[s]}, opts.cap)
            if r["status"] != "ok":
                rec[s]["status"], rec[s]["error"] = r["status"], r.get("error", "")
                live.remove(s)
                continue
            times[s].append(r["s"])
            spent[s] += r["s"] * number[s]
    for s in live:
        rec[s]["time_s"] = statistics.median(times[s])
        rec[s]["rounds"] = len(times[s])
        r = workers[s].ask({"op": "mem"}, opts.cap)
        if r["status"] == "ok":
            rec[s]["peak_bytes"] = r["bytes"]
    for s in live:
        workers[s].ask({"op": "release"}, 30)
    return rec


def machine():
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Linux {platform.release()}, Python {platform.python_version()}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="2 rounds of ~20 ms, print only")
    ap.add_argument("--cases", default=",".join(C.CASES))
    ap.add_argument("--sizes", default=",".join(C.SIZES))
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--cap", type=float, default=60.0, help="seconds a system may take on one request")
    ap.add_argument("--json", default=os.path.join(os.path.dirname(HERE), "out", "field.json"))
    ap.add_argument("--write", action="store_true", help="write bench/RESULTS.md and bench/field.png")
    ap.add_argument("--deadline", type=float, default=None,
                    help="minutes after which no new case starts (the rest are reported as not run)")
    ap.add_argument("-v", "--verbose", action="store_true")
    opts = ap.parse_args()
    opts.rounds = opts.rounds or (2 if opts.quick else 5)
    opts.target = 0.02 if opts.quick else 0.1
    names = [c for c in opts.cases.split(",") if c]
    sizes = [s for s in opts.sizes.split(",") if s]
    systems = [s for s in opts.systems.split(",") if s]
    if "numpy" not in systems:
        systems.insert(0, "numpy")
    tmp = tempfile.mkdtemp(prefix="npc-field-")
    env = thread_env(tmp)
    workers = {s: Worker(s, env) for s in systems}
    versions, start_errors = {}, {}
    missing = os.path.join(sys.prefix, "missing.txt")  # written by `make bench-peers`
    missing = open(missing).read() if os.path.exists(missing) else ""
    for s, w in workers.items():
        if w.start():
            versions.update(w.versions)
        else:
            pkg = {"numba_numpy": "numba", "numba_loops": "numba", "jax": "jax"}.get(s, s)
            start_errors[s] = ("did not install beside NumPy 2.5" if pkg in missing else w.start_error)
            print(f"{s}: not available ({w.start_error})", flush=True)
    load_before = os.getloadavg()
    t0 = time.time()
    results, not_run = {}, []
    try:
        for size in sizes:
            for name in names:
                if opts.deadline is not None and time.time() - t0 > opts.deadline * 60:
                    not_run.append(f"{name} ({size})")
                    continue
                t = time.perf_counter()
                rec = run_case(workers, name, size, opts, tmp)
                results.setdefault(size, {})[name] = rec
                base = rec["numpy"].get("time_s")
                cells = []
                for s in systems:
                    r = rec[s]
                    if r.get("time_s") and base:
                        cells.append(f"{s}={base / r['time_s']:.2f}x")
                    elif r["status"] != "n/a":
                        cells.append(f"{s}={r['status']}")
                print(f"{size:5} {name:12} numpy {base * 1e3 if base else float('nan'):8.2f} ms  "
                      + " ".join(cells) + f"  ({time.perf_counter() - t:.0f} s)", flush=True)
    finally:
        for w in workers.values():
            w.stop()
    data = {"command": " ".join([os.path.relpath(sys.executable), *sys.argv]),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "seconds": time.time() - t0, "machine": machine(), "threads": THREADS,
            "load_before": load_before, "load_after": os.getloadavg(), "versions": versions,
            "start_errors": start_errors, "systems": systems, "rounds": opts.rounds, "target_s": opts.target,
            "cap_s": opts.cap, "results": results, "not_run": not_run,
            "sizes": {n: {s: C.CASES[n][2][s] for s in C.SIZES} for n in names},
            "what": {n: C.CASES[n][3] for n in names}}
    os.makedirs(os.path.dirname(opts.json), exist_ok=True)
    with open(opts.json, "w") as f:
        json.dump(data, f, indent=1)
    print(f"results: {opts.json}")
    if opts.write:
        import report
        report.write(data)


if __name__ == "__main__":
    main()

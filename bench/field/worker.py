"""One system of the field suite in its own process (started by bench/field/run.py).

    python worker.py SYSTEM

Reads one JSON request per line on stdin and answers one JSON line on stdout:
  {"op": "prepare", "case": name, "size": size, "out": path}  build the inputs (same seed in
      every process), wrap the case for this system, run it once (the warm-up: reported as
      compile time) and save its result to `out` (.npz) for validation by the parent;
  {"op": "time", "number": k}  k calls, seconds per call;
  {"op": "mem"}  extra peak resident memory of one call (bytes, see Note [peak memory]);
  {"op": "release"}  drop the case.
A system that cannot run the case answers {"status": "n/a"} (no such port) or
{"status": "error", "error": "ClassName: message"}.
"""
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import numpy as np  # noqa: E402

import cases as C  # noqa: E402
import ports_other  # noqa: E402

THREADS = int(os.environ.get("FIELD_THREADS", "2"))
SYSTEM = sys.argv[1]


# Note [peak memory]
# Native allocations (npc's allocator, OpenMP buffers, XLA, torch, LLVM) are invisible to
# tracemalloc, so the suite reads the kernel's count of resident memory instead: writing "5"
# to /proc/self/clear_refs resets the process's resident high-water mark (VmHWM) to its
# current resident size, one call runs, and VmHWM minus the resident size before the call is
# the call's extra peak: temporaries plus the result, beyond the inputs and what the system
# already holds (compiled code, caches). Each system runs in its own process, so one system's
# allocations never count against another's. Two allocators would hide a call's memory from
# that count by keeping freed blocks resident: glibc's malloc, whose mmap threshold grows up
# to 32 MB after large blocks are freed, and npc's cache of large blocks (Note [large block
# cache] in src/core/ndarray.cpp). So every worker runs with glibc's steady state fixed from
# the start (mmap threshold 32 MB, trim threshold 64 MB: what the dynamic threshold reaches
# after the first large temporaries), the measured call runs with the threshold at 128 KiB
# (every large block mapped, so it counts, and unmapped when freed) and the threshold is set
# back after it; for npc the figure is the larger of the resident count and npc's own peak of
# live arrays (npc.memory_stats).
import ctypes  # noqa: E402

try:
    _LIBC = ctypes.CDLL("libc.so.6")
except OSError:
    _LIBC = None
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def malloc_steady(mmap_threshold=32 << 20):
    if _LIBC is not None:
        _LIBC.mallopt(_M_MMAP_THRESHOLD, mmap_threshold)
        _LIBC.mallopt(_M_TRIM_THRESHOLD, 2 * max(mmap_threshold, 32 << 20))
def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def peak_extra_bytes(fn):
    import gc
    gc.collect()
    malloc_steady(128 << 10)
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
    try:
        return _peak_extra_bytes(fn)
    finally:
        malloc_steady()


def _peak_extra_bytes(fn):
    npc = sys.modules.get("npc") if SYSTEM.startswith("npc") else None
    if npc is not None:
        npc.reset_peak_memory_stats()
        npc_base = npc.memory_stats()["current_bytes"]
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    base = _status_kb("VmRSS")
    keep = fn()
    peak = _status_kb("VmHWM")
    extra = max(0, peak - base) * 1024
    if npc is not None:
        extra = max(extra, npc.memory_stats()["peak_bytes"] - npc_base)
    del keep
    return extra


def to_numpy(r):
    """A system's result as NumPy arrays (a tuple stays a tuple)."""
    if isinstance(r, (tuple, list)):
        return tuple(to_numpy(x) for x in r)
    if hasattr(r, "block_until_ready"):
        r = r.block_until_ready()
    if type(r).__module__.startswith("npc"):
        from npc._array import _numpy_view
        return np.array(_numpy_view(r))
    if type(r).__module__.startswith("torch"):
        return r.detach().cpu().numpy()
    return np.array(r)


# ---------------------------------------------------------------- the systems
def setup():
    """Imports the system's library with THREADS threads; returns a dict of versions."""
    v = {"numpy": np.__version__}
    if SYSTEM.startswith("npc"):
        import npc
        v["npc"] = getattr(npc, "__version__", "?")
    elif SYSTEM.startswith("numba"):
        import numba
        numba.set_num_threads(THREADS)
        v["numba"] = numba.__version__
    elif SYSTEM == "numexpr":
        import numexpr
        numexpr.set_num_threads(THREADS)
        v["numexpr"] = numexpr.__version__
    elif SYSTEM == "torch":
        import torch
        torch.set_num_threads(THREADS)
        v["torch"] = torch.__version__
    elif SYSTEM == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)
        v["jax"] = jax.__version__
    _start_up()
    return v


def _start_up():
    """Compiles a trivial function once, so that one-time start-up of the compiler (imports,
    thread pools, LLVM or the C++ toolchain's first run) is not counted as any case's compile time."""
    x = np.linspace(0.0, 1.0, 64)

    def f(a):
        return np.sin(a) * 2.0 + 1.0
    if SYSTEM == "npc_compiled":
        import npc
        npc.compile(f)(x)
    elif SYSTEM == "numba_numpy" or SYSTEM == "numba_loops":
        from numba import njit
        njit(parallel=True)(f)(x)
    elif SYSTEM == "torch":
        import torch
        torch.compile(f)(x)
    elif SYSTEM == "jax":
        import jax
        import jax.numpy as jnp
        jax.jit(lambda a: jnp.sin(a) * 2.0 + 1.0)(x).block_until_ready()


_PORTS = {}


def runner(name, args):
    """A no-argument callable running case `name` on `args` with this system, or None."""
    fn = C.CASES[name][0]
    if SYSTEM == "numpy":
        return lambda: fn(*args)
    if SYSTEM == "npc_eager":
        import npc
        f = C.with_np(fn, npc)
        nargs = [npc.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        return lambda: f(*nargs)
    if SYSTEM == "npc_compiled":
        import npc
        f = npc.compile(fn)
        return lambda: f(*args)
    if SYSTEM == "numexpr":
        return ports_other.numexpr_runner(name, args)
    if SYSTEM == "numba_numpy":
        from numba import njit
        f = njit(parallel=True)(fn)
        return lambda: f(*args)
    if SYSTEM == "numba_loops":
        if "numba" not in _PORTS:
            import ports_numba
            _PORTS["numba"] = ports_numba.ports()
        f = _PORTS["numba"][name]
        return lambda: f(*args)
    if SYSTEM == "torch":
        import torch
        f = torch.compile(fn)
        return lambda: f(*args)
    if SYSTEM == "jax":
        import jax
        if "jax" not in _PORTS:
            import ports_jax
            _PORTS["jax"] = ports_jax.ports()
        f = _PORTS["jax"][name]
        jargs = [jax.device_put(a) if isinstance(a, np.ndarray) else a for a in args]
        return lambda: jax.block_until_ready(f(*jargs))
    if SYSTEM == "hand":
        return ports_other.handwritten_runner(name, args)
    raise ValueError(SYSTEM)


def main():
    malloc_steady()
    versions = setup()
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever the systems print stays off the protocol
    out.write(json.dumps({"ready": True, "versions": versions}) + "\n")
    out.flush()
    run = None
    for line in sys.stdin:
        req = json.loads(line)
        op = req["op"]
        try:
            if op == "prepare":
                run = None
                args = C.make_inputs(req["case"], req["size"])
                run = runner(req["case"], args)
                if run is None:
                    resp = {"status": "n/a"}
                else:
                    t = time.perf_counter()
                    res = run()
                    first = time.perf_counter() - t
                    res = to_numpy(res)
                    if isinstance(res, tuple):
                        np.savez(req["out"], *res)
                    else:
                        np.savez(req["out"], res)
                    resp = {"status": "ok", "first_s": first}
                    if SYSTEM == "npc_compiled":
                        f = getattr(run, "__closure__", None)
                        resp["breaks"] = _breaks(f)
            elif op == "time":
                n = req["number"]
                t = time.perf_counter()
                for _ in range(n):
                    run()
                resp = {"status": "ok", "s": (time.perf_counter() - t) / n}
            elif op == "mem":
                resp = {"status": "ok", "bytes": peak_extra_bytes(run)}
            elif op == "release":
                run = None
                resp = {"status": "ok"}
            else:
                resp = {"status": "error", "error": f"unknown op {op}"}
        except BaseException as e:  # noqa: BLE001 - reported, the parent decides
            msg = str(e).strip().splitlines()
            resp = {"status": "error", "error": f"{type(e).__name__}: {msg[0][:200] if msg else ''}",
                    "trace": traceback.format_exc()[-2000:]}
            run = None if op == "prepare" else run
        out.write(json.dumps(resp) + "\n")
        out.flush()


def _breaks(closure):
    """Graph breaks of the npc.compile'd function inside a runner's closure (count)."""
    for cell in closure or ():
        f = cell.cell_contents
        if hasattr(f, "last_breaks"):
            return len(list(f.last_breaks or []))
    return None


if __name__ == "__main__":
    main()

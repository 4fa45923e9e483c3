"""First call of one real program compiled: `python bench/first_call.py PROGRAM SIZE [CALLS]`.

Times `npc.compile(prog.fn)(*args)` as bench/bench_programs.py does (tracing, lowering,
kernel compiles or disk-cache loads, and the run), checks the result against NumPy's and
prints "SECONDS ok" (or "SECONDS WRONG"), then the time of one NumPy call and how the first
call ran (a trace loaded from the disk cache, traced, or eager by a kept choice). With CALLS
(default 1) the compiled function is called that many times on fresh copies of the
arguments (to fill a cache: the eager-or-compiled choice of a function with slow graph
breaks needs several timed calls). Run it in a fresh process per measurement, with
NPC_CACHE_DIR set to an empty directory for a cold kernel cache or to one that a previous
run filled for a warm one."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy  # noqa: E402

import bench.programs as bp  # noqa: E402
from bench.programs import harness as h  # noqa: E402


def main():
    name, size = sys.argv[1], sys.argv[2]
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    prog = bp.load()[name]
    args = prog.init(prog.sizes[size], numpy.random.default_rng(0))
    import npc
    cf = npc.compile(prog.fn)
    t0 = time.perf_counter()
    got = cf(*h.copy_args(args))
    t = time.perf_counter() - t0
    s = npc.compiler.stats()
    how = "loaded" if s["traces_loaded"] else "eager" if s["eager_runs"] else "traced"
    for _ in range(calls - 1):
        cf(*h.copy_args(args))
    a = h.copy_args(args)
    t0 = time.perf_counter()
    ref = prog.fn(*a)
    tn = time.perf_counter() - t0
    print("%.3f %s numpy %.3f %s" % (t, "WRONG" if h.mismatch(ref, got) else "ok", tn, how))


if __name__ == "__main__":
    main()

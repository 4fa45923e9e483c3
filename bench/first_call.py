"""First call of one real program compiled: `python bench/first_call.py PROGRAM SIZE`.

Times `npc.compile(prog.fn)(*args)` as bench/bench_programs.py does (tracing, lowering,
kernel compiles or disk-cache loads, and the run), checks the result against NumPy's and
prints "SECONDS ok" (or "SECONDS WRONG"). Run it in a fresh process per measurement, with
NPC_CACHE_DIR set to an empty directory for a cold kernel cache or to one that a previous
run filled for a warm one."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy  # noqa: E402

import bench.programs as bp  # noqa: E402
from bench.programs import harness as h  # noqa: E402


def main():
    name, size = sys.argv[1], sys.argv[2]
    prog = bp.load()[name]
    args = prog.init(prog.sizes[size], numpy.random.default_rng(0))
    import npc
    cf = npc.compile(prog.fn)
    t0 = time.perf_counter()
    got = cf(*h.copy_args(args))
    t = time.perf_counter() - t0
    ref = prog.fn(*h.copy_args(args))
    print("%.3f %s" % (t, "WRONG" if h.mismatch(ref, got) else "ok"))


if __name__ == "__main__":
    main()

"""Compile time of loop-heavy programs is bounded by their distinct kernels, not by their trip
counts (Note [loops] in src/tracer/trace_segments.cpp, Note [kernels across graphs] in
src/fusion/backend.cpp): programs of the real-programs suite (bench/programs/) at two sizes
compile the same set of kernels, a second process on the same disk cache compiles nothing, and
a scalar loop over an array's elements does not end a segment per element (Note [reads of
unchanged inputs] in src/tracer/trace_segments.cpp)."""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import npc

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import bench.programs as bp  # noqa: E402

# One compiled call in a fresh process: checks the result against NumPy, prints the fused
# backend's compiles, disk-cache hits and segment cuts; the kernels it ran are in its log.
_RUN = """
import sys
sys.path.insert(0, {root!r})
import numpy as np, npc
import bench.programs as bp
from bench.programs import harness as h
prog = bp.load()[{name!r}]
args = prog.init({size}, np.random.default_rng(0))
got = npc.compile(prog.fn)(*h.copy_args(args))
assert h.mismatch(prog.fn(*h.copy_args(args)), got) is None
s, c = npc._fusion.stats(), npc.compiler.stats()
print(s["compiles"], s["disk_hits"], c["segment_cuts"])
"""


def _run(name, size, cache, budget):
    env = dict(os.environ, NPC_CACHE_DIR=cache, NPC_SEGMENT_NODES=str(budget), NPC_LOGS="output_code")
    r = subprocess.run([sys.executable, "-c", _RUN.format(root=str(ROOT), name=name, size=size)],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    compiles, hits, cuts = (int(v) for v in r.stdout.split()[-3:])
    return _kernels(r.stderr), compiles, hits, cuts


def _kernels(log):
    """The texts of the kernels NPC_LOGS=output_code listed (every kernel each graph runs), each
    with its name (a hash of its text) and the row strides of its static shapes taken out: a
    kernel is generic over offsets, extents and indices (Note [generic kernels] in
    src/fusion/kernel_params.cpp) but keeps the coefficients of its loop variables, the strides
    of the arrays it indexes, which the vectoriser needs. An n x n matrix at two sizes has two
    row strides; the kernels are the same otherwise."""
    out = set()
    for m in re.finditer(r"extern \"C\" int (npc_k[0-9a-f]{16})\(.*?\n}", log, re.S):
        text = m.group(0).replace(m.group(1), "KERNEL")
        out.add(re.sub(r"\(int64_t\)\d+\*", "(int64_t)STRIDE*", text))
    return out


@pytest.mark.parametrize("name, small, large, budget", [
    ("lu", 14, 30, 300),
    ("seidel_2d", 9, 17, 300),
    pytest.param("adi", 26, 40, 150, marks=pytest.mark.xfail(
        strict=True, reason="four loops in a row: where the cuts of the later loops fall depends on the trip "
                            "count (Note [aligned cuts]), so segment boundaries fuse differently and Python "
                            "float constants are literals in some segments and runtime scalars in others "
                            "(23 kernels at both sizes, 7 of them different)")),
])
def test_same_kernels_at_two_trip_counts_and_none_compiled_warm(name, small, large, budget):
    runs = {}
    for size in (small, large):
        cache = tempfile.mkdtemp(prefix="npc-loop-kernels-")
        runs[size] = _run(name, size, cache, budget)
        if size == large:
            # A second process on the warm disk cache loads every kernel and compiles none.
            warm = _run(name, size, cache, budget)
    (k0, _, _, cuts0), (k1, compiles1, _, cuts1) = runs[small], runs[large]
    assert cuts1 > cuts0 > 0, (cuts0, cuts1)  # the larger size runs more iterations and segments
    assert k0 and k0 == k1, (sorted(k0 - k1)[:2], sorted(k1 - k0)[:2])
    assert compiles1 > 0
    kw, compiles_w, hits_w, _ = warm
    assert compiles_w == 0 and hits_w > 0, (compiles_w, hits_w)
    assert kw == k1


def test_scalar_loop_over_elements_continues_its_segment():
    # crc16 (bench/programs/misc.py) realizes one element per byte: each is a graph break, but
    # nothing pending needs to run for it, so the trace does not lower a segment per element.
    prog = bp.load()["crc16"]
    data = prog.init(300, np.random.default_rng(1))[0]
    cf = npc.compile(prog.fn)
    npc.compiler.reset()
    got = cf(data)
    assert got == prog.fn(data) and type(got) is type(prog.fn(data))
    assert cf.last_breaks and len(cf.last_breaks) == 300
    assert len(cf.last_graphs) < 10, len(cf.last_graphs)
    assert cf(data[::-1].copy()) == prog.fn(data[::-1].copy())


def test_read_of_unchanged_input_in_a_continuing_segment():
    # The realized element is bound as an input of the continuing segment: the trace goes on
    # in the same graph (one graph, one break) and reads the value the Python saw.
    def f(x):
        a = x[2]
        k = int(x[1])  # a read of an unchanged input with only views pending: the segment goes on
        return x[k] * 2 + a, k

    x = np.array([3.0, 2.0, 0.0, 1.0])
    e = npc.explain(f)(x)
    assert e.graph_break_count == 1 and e.graph_count == 1, str(e)
    cf = npc.compile(f)
    for v in (x, x[::-1].copy()):
        got, want = cf(v), f(v)
        assert got[1] == want[1] and np.asarray(got[0]) == want[0]


def test_read_after_pending_work_ends_the_segment():
    # A pending write (or any operation) must run before the value is read: a real break.
    def f(x):
        x[1] = x[0] + 1
        k = int(x[1])
        return x * k, k

    x = np.array([1.0, 2.0, 0.0, 1.0])
    e = npc.explain(f)(x.copy())
    assert e.graph_break_count == 1 and e.graph_count == 2, str(e)
    cf = npc.compile(f)
    a, b = x.copy(), x.copy()
    got, want = cf(a), f(b)
    assert got[1] == want[1] == 2
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(a, b)

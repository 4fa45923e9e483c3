"""Plan serialization (Note [plan serialization] in src/tracer/plan_io.cpp) on the plans that
compiling the loop programs of bench/programs produces: with a small segment budget a loop is
cut into segments and cached as a plan; the plan is written and read back, the copy must write
the same bytes again and, replayed with the inputs and scalars the cache entry passes, compute
bit for bit what the original plan computes (results and writes into its inputs)."""
import pathlib
import sys
import warnings

import numpy as np
import pytest

import npc
from npc import _core

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import bench.programs as bp  # noqa: E402
from bench.programs import harness as h  # noqa: E402
from _serialization import assert_bitwise_equal, reseal as _reseal, run_on_copies  # noqa: E402

PROGRAMS = bp.load()
SEGMENT_NODES = 50  # small: the loop programs are cut into several segments
# The programs whose compiled trace is a plan at this budget (others, e.g. trisolv or crc16,
# have graph breaks: their Python runs on every call and no plan is kept).
LOOPS = ("adi", "cavity_flow", "cholesky", "fdtd_2d", "gramschmidt", "heat_3d", "jacobi_1d", "jacobi_2d", "lu",
         "nbody", "seidel_2d")


def _planned(name, backend="fused"):
    """(plan, inputs, floats) of program `name`: the plan of its cache entry and what a replay of
    the entry passes it (recorded on a second call), or None when the trace kept no plan."""
    prog = PROGRAMS[name]
    args = prog.init(prog.sizes["tiny"], np.random.default_rng(0))
    with npc.config.patch(segment_nodes=SEGMENT_NODES):
        cf = npc.compile(prog.fn, backend=backend)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            cf(*h.copy_args(args))
            entries = [e for es in cf._entries.values() for e in es if e.plan]
            if not entries:
                return None
            e = entries[0]
            plan, seen = e.graph, []

            def record(inputs, floats):
                # Copies before the run: the plan writes into the arrays it is given.
                seen.append(([np.array(x, copy=True) for x in inputs], list(floats)))
                return plan(inputs, floats)
            e.graph = record
            try:
                cf(*h.copy_args(args))
            finally:
                e.graph = plan
    assert seen, f"{name}: the second call did not replay the plan"
    return plan, seen[0][0], seen[0][1]


@pytest.mark.parametrize("name", LOOPS)
def test_plans_round_trip(name):
    got = _planned(name)
    assert got is not None, f"{name} keeps no plan at segment_nodes={SEGMENT_NODES}"
    plan, inputs, floats = got
    data = plan.serialize()
    loaded = _core._plan_load(data, "fused")
    assert loaded.serialize() == data
    assert loaded.num_steps == plan.num_steps
    assert loaded.num_graphs == plan.num_graphs
    assert str(loaded) == str(plan)
    want, have = run_on_copies(plan, inputs, floats), run_on_copies(loaded, inputs, floats)
    if isinstance(want[0], type):
        assert have == want
        return
    assert len(have[0]) == len(want[0]) and len(have[1]) == len(want[1])
    for x, y in zip(want[0] + want[1], have[0] + have[1]):
        assert_bitwise_equal(x, y)


def test_a_shared_graph_is_stored_once():
    plan, _, _ = _planned("cavity_flow")
    # The segment cache hands equal segments one graph: 36 steps run 7 graphs.
    assert plan.num_graphs < plan.num_steps
    data = plan.serialize()
    assert data.count(b"NPCGRAPH") == plan.num_graphs
    assert sorted({g for g, _, _, _ in _steps(data)}) == list(range(plan.num_graphs))
    loaded = _core._plan_load(data, "eager")
    assert loaded.num_graphs == plan.num_graphs and loaded.num_steps == plan.num_steps


def test_loading_reuses_compiled_segments():
    # Each distinct graph is compiled once, through the segment cache: a plan loaded in the
    # process that traced it lowers nothing; after the cache is cleared, its graphs once each.
    plan, _, _ = _planned("lu")
    data = plan.serialize()
    lowered = lambda: _core._fusion_stats()["graphs"]  # noqa: E731
    before = lowered()
    _core._plan_load(data, "fused")
    assert lowered() == before
    _core._clear_segment_cache()
    _core._plan_load(data, "fused")
    assert lowered() == before + plan.num_graphs
    _core._plan_load(data, "fused")
    assert lowered() == before + plan.num_graphs


def test_bad_bytes_raise_value_error():
    plan, inputs, floats = _planned("jacobi_2d", backend="eager")
    data = plan.serialize()
    # Every truncation.
    for n in range(0, len(data), max(1, len(data) // 200)):
        with pytest.raises(ValueError, match="npc plan bytes"):
            _core._plan_load(data[:n], "eager")
    with pytest.raises(ValueError, match="npc plan bytes"):
        _core._plan_load(data[:-1], "eager")
    # Flipped bytes: caught by the checksum, or by the header checks before it.
    for i in range(0, len(data), max(1, len(data) // 200)):
        flipped = bytearray(data)
        flipped[i] ^= 0x41
        with pytest.raises(ValueError, match="npc plan bytes"):
            _core._plan_load(bytes(flipped), "eager")
    with pytest.raises(ValueError, match="not a serialized npc plan"):
        _core._plan_load(b"x" * 64, "eager")
    # A graph's bytes are not a plan's.
    with pytest.raises(ValueError, match="not a serialized npc plan"):
        _core._plan_load(b"NPCGRAPH" + data[8:], "eager")
    # Still loads after all that; a call with fewer inputs than the plan takes is refused.
    loaded = _core._plan_load(data, "eager")
    with pytest.raises(ValueError, match="inputs, the plan takes"):
        loaded([npc.asarray(a.copy()) for a in inputs[:-1]], floats)


def _steps_offset(data):
    """Offset of the step count: after the header, the counts and the graphs."""
    pos = 8 + 4 + 8 + 4 + 4
    ngraphs = int.from_bytes(data[pos:pos + 4], "little")
    pos += 4
    for _ in range(ngraphs):
        n = int.from_bytes(data[pos:pos + 8], "little")
        pos += 8 + n
    return pos


def _steps(data):
    """The steps of plan bytes: (graph index, [(kind, index, step, offset)], [scalar offset],
    [(step, output, offset)]) each."""
    u32 = lambda p: int.from_bytes(data[p:p + 4], "little")  # noqa: E731
    i32 = lambda p: int.from_bytes(data[p:p + 4], "little", signed=True)  # noqa: E731
    pos = _steps_offset(data)
    out = []
    n, pos = u32(pos), pos + 4
    for _ in range(n):
        g, pos = u32(pos), pos + 4
        ni, pos = u32(pos), pos + 4
        ins = [(data[pos + 9 * i], i32(pos + 9 * i + 1), i32(pos + 9 * i + 5), pos + 9 * i) for i in range(ni)]
        pos += 9 * ni
        ns, pos = u32(pos), pos + 4
        scalars = [pos + 42 * k for k in range(ns)]
        pos += 42 * ns
        nr, pos = u32(pos), pos + 4
        rel = [(i32(pos + 8 * k), i32(pos + 8 * k + 4), pos + 8 * k) for k in range(nr)]
        pos += 8 * nr
        out.append((g, ins, scalars, rel))
    assert pos == len(data) - 8
    return out


def _patched(data, offset, raw):
    b = bytearray(data)
    b[offset:offset + len(raw)] = raw
    return _reseal(b)


def test_steps_are_checked():
    plan, _, _ = _planned("jacobi_2d", backend="eager")
    data = plan.serialize()
    steps = _steps(data)
    i32 = lambda v: int(v).to_bytes(4, "little", signed=True)  # noqa: E731
    s, (_, ins, scalars, rel) = next((s, st) for s, st in enumerate(steps) if st[3] and st[2] and s > 0)
    kind1 = next(x for x in ins if x[0] == 1)
    kind0 = next((x for x in ins if x[0] == 0), None)
    cases = [
        (kind1[3] + 5, i32(s), "not an earlier one"),            # reads its own output
        (kind1[3] + 1, i32(1000), "missing output"),
        (kind1[3], b"\x02", "source kind"),
        (rel[0][2], i32(s), "not an earlier one"),                # releases its own output
        (rel[0][2] + 4, i32(-1), "missing output"),
        (scalars[0], b"\x00", "dtype"),                          # a bool scalar for a float node
        (scalars[0], b"\xee", "scalar dtype"),
        (_steps_offset(data) + 4, i32(7), "graph index"),         # step 0's graph
        (12 + 8, i32(0), "missing input"),                        # num_inputs 0
        (12 + 8 + 4, i32(3), "floats"),                           # 3 float arguments
    ]
    if kind0 is not None:
        cases.append((kind0[3] + 1, i32(10 ** 6), "missing input"))
        cases.append((kind0[3] + 5, i32(0), "missing input"))  # a call input with a step
    # A later step reads an output released before it.
    t, k, _ = rel[0]
    later = next(((q, x) for q, st in enumerate(steps) if q > s for x in st[1] if x[0] == 1), None)
    if later is not None:
        cases.append((later[1][3] + 1, i32(k) + i32(t), "released before"))
    for offset, raw, message in cases:
        with pytest.raises(ValueError, match=message):
            _core._plan_load(_patched(data, offset, raw), "eager")
    # A release repeated within the step (its count grown over the next release's bytes).
    if len(rel) >= 2:
        b = bytearray(data)
        b[rel[1][2]:rel[1][2] + 8] = data[rel[0][2]:rel[0][2] + 8]
        with pytest.raises(ValueError, match="twice"):
            _core._plan_load(_reseal(b), "eager")


def test_resealed_mutations_of_the_steps_raise_value_error():
    # Past the checksum: the checks of the steps' wiring (sources, scalars, releases).
    plan, _, _ = _planned("seidel_2d", backend="eager")
    data = plan.serialize()
    start = _steps_offset(data)
    rng = np.random.default_rng(0)
    accepted = 0
    for i in range(start, len(data) - 8):
        for v in (0x00, 0xFF, int(rng.integers(0, 256))):
            if data[i] == v:
                continue
            b = bytearray(data)
            b[i] = v
            try:
                loaded = _core._plan_load(_reseal(b), "eager")
            except ValueError as e:
                assert "npc plan" in str(e)
                continue
            # Accepted bytes are a valid plan that writes them back exactly (a scalar's value).
            accepted += 1
            assert loaded.serialize() == _reseal(b)
    assert accepted < (len(data) - 8 - start) * 3


def test_host_calls_cannot_be_stored():
    def f(a):
        for _ in range(30):
            a = a + np.random.rand(*a.shape)
        return a
    with npc.config.patch(segment_nodes=10):
        cf = npc.compile(f, backend="eager")
        cf(np.ones(3))
        plans = [e.graph for es in cf._entries.values() for e in es if e.plan]
    assert plans  # numpy.random is a host call inside the segments, not a break
    for p in plans:
        with pytest.raises(ValueError, match="host calls"):
            p.serialize()

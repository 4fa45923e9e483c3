"""Graph serialization (Note [graph serialization] in src/tracer/graph_io.cpp) on the graphs that
compiling real programs produces: every segment graph of the bench/programs suite at its tiny
size, with a small segment budget so that the loops are cut into several segments, is written
and read back; the copy must be the same graph (text, structural hash, structure, interface,
bytes) and, compiled with the fused backend, compute bit for bit what the original does on
the same inputs."""
import pathlib
import sys

import numpy as np
import pytest

import npc
from npc import _core

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import bench.programs as bp  # noqa: E402
from bench.programs import harness as h  # noqa: E402
from _serialization import assert_bitwise_equal, run_on_copies  # noqa: E402

PROGRAMS = bp.load()
SEGMENT_NODES = 50  # small: the loop programs are cut into several segments

_NUMPY_DTYPES = [np.dtype(t) for t in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                       "uint64", "float16", "float32", "float64", "complex64", "complex128")]


def _segment_graphs(name):
    """The segment graphs of the trace of program `name` (CompiledFunction.last_graphs)."""
    prog = PROGRAMS[name]
    args = prog.init(prog.sizes["tiny"], np.random.default_rng(0))
    with npc.config.patch(segment_nodes=SEGMENT_NODES):
        cf = npc.compile(prog.fn, backend="fused")
        cf(*h.copy_args(args))
    return cf.last_graphs


def _random_array(rng, dtype, shape, extent=None):
    if extent is not None:  # an index array the graph bounds-checks: values in range
        return rng.integers(-extent, extent, size=shape).astype(dtype) if extent else np.zeros(shape, dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -5, 6, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _arguments(iface, seed):
    """Inputs and runtime scalars for a graph with interface `iface`."""
    rng = np.random.default_rng(seed)
    extents = {}
    for i, extent, _ in iface["index_checks"]:
        extents[i] = min(extent, extents.get(i, extent))
    nodes = {}
    for i, code, shape in iface["input_nodes"]:
        nodes.setdefault(i, (code, shape))
    inputs = []
    for i in range(iface["num_inputs"]):
        code, shape = nodes.get(i, (11, ()))  # an input no node reads: any array
        inputs.append(_random_array(rng, _NUMPY_DTYPES[code], shape, extents.get(i)))
    kinds = dict(iface["scalar_nodes"])
    scalars = []
    for k in range(iface["num_scalars"]):
        kind = _NUMPY_DTYPES[kinds.get(k, 11)].kind
        v = rng.standard_normal()
        scalars.append(complex(v, rng.standard_normal()) if kind == "c" else int(v * 4) if kind in "iub" else float(v))
    return inputs, scalars


def _check_round_trip(g):
    data = g.serialize()
    c = _core._graph_deserialize(data, "fused")
    assert c.serialize() == data
    assert g.same_structure(c) and c.same_structure(g)
    assert str(c) == str(g)
    assert c.structural_hash == g.structural_hash
    assert c.interface() == g.interface()
    assert c.backend == g.backend
    for seed in (0, 1):
        inputs, scalars = _arguments(g.interface(), seed)
        want, got = run_on_copies(g, inputs, scalars), run_on_copies(c, inputs, scalars)
        if isinstance(want[0], type):
            assert got == want
            continue
        assert len(got[0]) == len(want[0])
        for x, y in zip(want[0] + want[1], got[0] + got[1]):
            assert_bitwise_equal(x, y)
    return data


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_segment_graphs_round_trip(name):
    graphs = _segment_graphs(name)
    stored = 0
    for i in range(len(graphs)):
        g = _core._segment_graph(graphs, i, "fused")
        if g.interface()["calls"]:
            # Host calls (numpy.random, checks of computed indices) close over this process.
            with pytest.raises(ValueError, match="host calls"):
                g.serialize()
            continue
        _check_round_trip(g)
        stored += 1
    assert stored > 0 or name in ("fft_autosort",)


def test_loops_are_cut_into_several_segments():
    # The round trips above cover graphs of cut loops (owned inputs, unread outputs).
    graphs = _segment_graphs("jacobi_1d")
    assert len(graphs) > 1
    ifaces = [_core._segment_graph(graphs, i, "eager").interface() for i in range(len(graphs))]
    assert any(f["owned_inputs"] for f in ifaces)
    assert any(f["writebacks"] or f["unread_outputs"] for f in ifaces)


def test_bad_bytes_raise_value_error():
    g = _core._segment_graph(_segment_graphs("jacobi_2d"), 0, "eager")
    data = g.serialize()
    for n in (0, 7, 20, len(data) // 2, len(data) - 1):
        with pytest.raises(ValueError, match="npc graph bytes"):
            _core._graph_deserialize(data[:n], "eager")
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x10
    with pytest.raises(ValueError, match="checksum"):
        _core._graph_deserialize(bytes(flipped), "eager")
    with pytest.raises(ValueError, match="not a serialized npc graph"):
        _core._graph_deserialize(b"x" * 64, "eager")

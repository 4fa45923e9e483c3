"""Numbers that reach a segment after a graph break (NumPy scalars computed between breaks,
values realized by one, what Python computes from them) are runtime scalars of the segment,
not constants (Note [values after a break] in src/tracer/trace_nodes.cpp), and buffers nothing
refers to any more are not carried across breaks (Note [dead buffers at a break]): a loop
with a break per iteration compiles the same translation units at any trip count and for any
data."""
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import npc


def _units():
    """Translation units compiled or loaded from disk so far in this process (each distinct
    kernel source is compiled or loaded once; later uses are memory hits)."""
    s = npc._fusion.stats()
    return s["compiles"] + s["disk_hits"]


def ring_means(data, radius, edges):
    res = np.zeros(edges.shape[0] - 1)
    for i in range(edges.shape[0] - 1):
        # a boolean mask as a value: a break; the eager mean flows back as res[i]'s value
        res[i] = data[(edges[i] <= radius) & (radius < edges[i + 1])].mean()
    return res


def rescale(x, steps):
    y = x.copy()
    for k in range(steps):
        s = float(np.abs(y).max())        # realized at a break: a Python float
        y = y / s + 0.25 * k              # ... used as operands of the traced code
    return y


def argmax_rows(x):
    out = np.zeros_like(x)
    for k in range(x.shape[0]):
        j = int(x[k].argmax())            # needed as an index (structure) and as a value
        out[k, j] = x[k, j] * j + k
    return out


def _ring_args(n, nbins, seed):
    rng = np.random.default_rng(seed)
    data = rng.random((n, n))
    y, x = np.indices(data.shape)
    radius = np.hypot(x - n / 2, y - n / 2)
    return data, radius, np.linspace(0, radius.max() + 1e-9, nbins + 1)


def test_ring_loop_compiles_no_new_units_for_new_data():
    npc.compiler.reset()
    f = npc.compile(ring_means)
    args = _ring_args(24, 6, 0)
    np.testing.assert_array_equal(f(*args), ring_means(*args))
    # Before: every call compiled new units (each iteration's mean was a literal).
    for seed in (1, 2):
        args = _ring_args(24, 6, seed)
        before = _units()
        np.testing.assert_array_equal(f(*args), ring_means(*args))
        assert _units() == before, seed


_UNITS_AT = """
import os, sys, tempfile
os.environ["NPC_CACHE_DIR"] = tempfile.mkdtemp()
sys.path.insert(0, {here!r})
import numpy as np, npc
import test_compile_values_after_break as t
args = t._ring_args(24, {nbins}, 0)
np.testing.assert_array_equal(npc.compile(t.ring_means)(*args), t.ring_means(*args))
print(t._units())
"""


def test_ring_loop_compiles_the_same_units_at_two_trip_counts():
    # A fresh process and disk cache per trip count. Before: 8 and 17 units (one per
    # iteration, plus the segments around the loop).
    here = str(pathlib.Path(__file__).resolve().parent)
    counts = [int(subprocess.run([sys.executable, "-c", _UNITS_AT.format(here=here, nbins=nbins)],
                                 capture_output=True, text=True, check=True).stdout.split()[-1])
              for nbins in (6, 15)]
    assert counts[0] == counts[1] and counts[0] <= 5, counts


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_realized_floats_flow_back_as_runtime_values(dtype):
    npc.compiler.reset()
    f = npc.compile(rescale)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((40, 30)) * 3).astype(dtype)
    want = rescale(x, 3)
    got = f(x, 3)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    before = _units()
    for steps, seed in ((3, 1), (6, 2)):
        x = (np.random.default_rng(seed).standard_normal((40, 30)) * 3).astype(dtype)
        want = rescale(x, steps)
        got = f(x, steps)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert _units() == before


def test_realized_int_is_an_index_and_a_value():
    npc.compiler.reset()
    f = npc.compile(argmax_rows)
    for seed in (0, 1, 2):
        x = np.random.default_rng(seed).standard_normal((6, 9))
        np.testing.assert_array_equal(f(x), argmax_rows(x))


def test_numpy_scalar_dtypes_after_a_break():
    # NEP 50: a float32 NumPy scalar keeps a float32 array float32; a float64 one promotes it.
    def g(x):
        m32 = x.max()                     # eager float32 scalar after the break below
        s = float(x.min())                # break
        m32 = x.max()
        a = x * m32                       # float32
        b = x * np.float64(s)             # float64 (a strong float64 scalar)
        c = x + s                         # float32 (a weak Python float)
        return a, b, c, m32
    x = np.linspace(-1, 2, 24, dtype=np.float32).reshape(4, 6)
    got = npc.compile(g)(x)
    want = g(x)
    for gv, wv in zip(got, want):
        assert np.asarray(gv).dtype == np.asarray(wv).dtype
        np.testing.assert_array_equal(gv, wv)
    assert isinstance(got[3], np.float32)


def test_returned_scalar_after_a_break_is_not_frozen():
    def g(x):
        t = float(x.sum())
        return x.max() * 2, t
    f = npc.compile(g)
    for seed in range(3):
        x = np.random.default_rng(seed).random(10)
        got, want = f(x), g(x)
        assert got[0] == want[0] and got[1] == want[1]
        assert type(got[0]) is type(want[0])


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("s", [1j, 0.5 + 0.5j, np.complex64(2 - 1j)])
def test_complex_numbers_after_a_break(backend, s):
    # A complex number after a break stays a constant: as a runtime scalar its imaginary
    # part was lost in the fused comparison (a0 < 1j gave False for a0 == 0).
    def f(a0):
        a0[a0 == 1]  # a graph break (a data-dependent shape)
        return a0 < s, a0 + s, a0 * s, a0 == s

    a = np.arange(4, dtype=np.int32)
    got, want = npc.compile(f, backend=backend)(a.copy()), f(a.copy())
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g), w)

"""A trace abandoned after its segments ran (Note [undoing an abandoned trace's writes] in
src/tracer/trace_segments.cpp): a float or int argument traced as a runtime scalar that the
Python later needs as a value makes npc.compile trace again with it static; segments cut and
run before that wrote into the arguments, and the new trace must start from the caller's
data. Values against NumPy, on the first call and on later ones."""
import contextlib

import numpy as np
import pytest

import npc
from npc import _core


@contextlib.contextmanager
def _budget(n, background=False):
    old = npc.config.segment_nodes
    npc.config.segment_nodes = n
    prev = _core._background_segments(1 if background else 0)
    try:
        yield
    finally:
        npc.config.segment_nodes = old
        _core._background_segments(prev)


def sweep_then_branch(a, w):
    for _ in range(2):
        for i in range(1, a.shape[0]):
            for j in range(1, a.shape[1]):
                a[i, j] = (a[i - 1, j] + a[i, j - 1] + a[i, j]) * w
    if w > 0.5:  # the float is needed as a Python value after the loop ran
        a[0, 0] = -1.0
    return a


def sweeps(a, k):
    for _ in range(k):  # range(k): a runtime int made static
        for i in range(1, a.shape[0]):
            for j in range(1, a.shape[1]):
                a[i, j] = (a[i - 1, j] + a[i, j - 1] + a[i, j]) / 3.0
    return a


G = np.zeros((6, 6))


def into_global(w):
    for i in range(1, G.shape[0]):
        for j in range(G.shape[1]):
            G[i, j] = G[i - 1, j] * w + 1.0
    return float(w * 2) if w > 0 else 0.0


def _grid(n, m=None):
    return np.arange(n * (m or n), dtype=np.float64).reshape(n, m or n) / 7.0


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("background", [False, True])
def test_float_needed_after_cuts_keeps_the_arguments(backend, background):
    with _budget(30, background):
        f = npc.compile(sweep_then_branch, backend=backend)
        for w in (0.3, 0.7, 0.3):
            a = _grid(6)
            want = sweep_then_branch(a.copy(), w)
            got = f(a, w)
            np.testing.assert_array_equal(np.asarray(got), want)
            np.testing.assert_array_equal(a, want)  # written in place, as NumPy writes it
            assert npc.compiler.stats()["segment_cuts"] > 0


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_runtime_int_made_static_after_cuts(backend):
    with _budget(30):
        f = npc.compile(sweeps, backend=backend)
        for k in (1, 2, 3, 2):
            a = _grid(5)
            want = sweeps(a.copy(), k)
            np.testing.assert_array_equal(np.asarray(f(a, k)), want)
            np.testing.assert_array_equal(a, want)


def test_default_budget_large_grid():
    f = npc.compile(sweep_then_branch)
    a = np.random.default_rng(0).random((70, 70)) / 3
    want = sweep_then_branch(a.copy(), 0.3)
    np.testing.assert_allclose(np.asarray(f(a, 0.3)), want, rtol=1e-13, atol=0)


def test_captured_array_written_before_the_retrace():
    with _budget(20):
        f = npc.compile(into_global)
        for w in (0.5, 1.5):
            G[...] = 0.0
            G[0] = np.arange(6.0)
            want_g = G.copy()
            want = None
            ref = want_g.copy()
            for i in range(1, 6):
                ref[i] = ref[i - 1] * w + 1.0
            want = float(w * 2)
            got = f(w)
            assert got == want
            np.testing.assert_array_equal(G, ref)

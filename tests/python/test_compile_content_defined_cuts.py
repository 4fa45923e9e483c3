"""Content-defined cuts (Note [content-defined cuts] in src/tracer/trace_segments.cpp): a loop
that repeats a sweep is cut at the same iterations in every sweep, so the segments of later
sweeps are found in the segment cache instead of being lowered again; values stay NumPy's."""
import contextlib

import numpy as np
import pytest

import npc


@contextlib.contextmanager
def _budget(n):
    old = npc.config.segment_nodes
    npc.config.segment_nodes = n
    try:
        yield
    finally:
        npc.config.segment_nodes = old


def sweeps(A, steps):
    # Gauss-Seidel-like sweeps: a row update, then a Python loop over the row's elements.
    A = A.copy()
    n = A.shape[0]
    for _ in range(steps):
        for i in range(1, n - 1):
            A[i, 1:-1] = (A[i - 1, 1:-1] + A[i + 1, 1:-1] + A[i, 1:-1]) / 3.0
            for j in range(1, n - 1):
                A[i, j] = (A[i, j] + A[i, j - 1]) * 0.5
    return A


def rows_only(A, steps):
    # Every iteration builds the same nodes but for its row offset: anchors everywhere.
    A = A.copy()
    for _ in range(steps):
        for i in range(1, A.shape[0]):
            A[i] = A[i] * 0.5 + A[i - 1]
    return A


def same_nodes(x, steps):
    # Iterations whose nodes are equal (no integer changes): one hash for every anchor.
    for _ in range(steps):
        x = np.sqrt(x * x + 1.0) - 0.5
    return x


def _grid(n, seed=0):
    return np.random.default_rng(seed).random((n, n))


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_repeated_sweeps_reuse_their_segments(backend):
    npc.compiler.reset()
    with _budget(300):
        f = npc.compile(sweeps, backend=backend)
        A = _grid(30)
        got = f(A, 3)
        np.testing.assert_allclose(np.asarray(got), sweeps(A, 3), rtol=1e-13, atol=0)
        s = npc.compiler.stats()
        # Three equal sweeps: after the cuts of the second sweep fall where those of the
        # first did, its segments and all of the third's are found, not lowered.
        assert s["segment_cuts"] > 12 and s["graph_breaks"] == 0, s
        assert s["segments_reused"] >= s["segment_cuts"] // 2, s
        # The plan replays with new data.
        A = _grid(30, 1)
        np.testing.assert_allclose(np.asarray(f(A, 3)), sweeps(A, 3), rtol=1e-13, atol=0)


def test_later_sweeps_are_cut_where_the_first_was():
    # Segments of a repeated sweep are the same graphs: with more sweeps, each extra sweep
    # adds its segments to the reused ones (after at most a few segments to fall in step).
    counts = []
    for steps in (2, 4):
        npc.compiler.reset()
        with _budget(300):
            A = _grid(30)
            got = npc.compile(sweeps)(A, steps)
            np.testing.assert_allclose(np.asarray(got), sweeps(A, steps), rtol=1e-13, atol=0)
        s = npc.compiler.stats()
        counts.append((s["segment_cuts"], s["segments_reused"], s["kernels_compiled"]))
    (c2, r2, k2), (c4, r4, k4) = counts
    per_sweep = c2 // 2
    assert r4 - r2 >= 2 * per_sweep - 2, counts
    assert k2 == k4, counts


@pytest.mark.parametrize("fn, make", [(rows_only, lambda: [_grid(40)[:, :7], 3]),
                                      (same_nodes, lambda: [np.linspace(0, 1, 11), 200])])
@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_loops_cut_by_content_equal_numpy(fn, make, backend):
    npc.compiler.reset()
    with _budget(60):
        f = npc.compile(fn, backend=backend)
        for _ in range(2):
            args = make()
            np.testing.assert_allclose(np.asarray(f(*args)), fn(*args), rtol=1e-13, atol=1e-15)
    s = npc.compiler.stats()
    assert s["segment_cuts"] > 3 and s["graph_breaks"] == 0, s

"""npc.compile of functions whose arrays pass through graph breaks (Note [unread outputs] in
src/tracer/trace_segments.cpp): a break lists the segment's inputs among its results without
copying them, so an argument (or a value carried from an earlier segment) is the same array on
both sides of the break. Compared with NumPy running the same function: values, the writes
into the arguments, and which results are the arguments themselves or share memory with
them, on the tracing call and on replays, with both backends."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, assert_same_as_numpy, _copy


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-break-passthrough")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache, eager_if_faster=False):
        compiler.reset()
        yield
        compiler.reset()


def _leaves(r):
    if isinstance(r, (tuple, list)):
        return [y for x in r for y in _leaves(x)]
    return [r]


def aliasing(fn, args):
    """For each array result: (is argument k, shares memory with argument k) for every k,
    and whether it shares memory with each other result."""
    args = _copy(args)
    res = [r for r in _leaves(fn(*args)) if isinstance(r, np.ndarray)]
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    table = [[(r is a, bool(np.shares_memory(r, a))) for a in arrays] for r in res]
    pairs = [[bool(np.shares_memory(r, s)) for s in res] for r in res]
    return table, pairs


def check(fn, *calls, backend):
    compiler.reset()
    cf = npc.compile(fn, backend=backend)
    for args in calls:
        assert_same_as_numpy(cf, fn, *args)
        assert aliasing(cf, args) == aliasing(fn, args)
    return cf


def write_after_breaks(x, y):
    s = float(x.sum())  # a break: x and y pass through it
    t = float((y * 2).sum())  # another
    x[0] = s + t  # writes into arguments that passed through the breaks
    y[1:] += x[:-1]
    return x, y[::2], s


def carried_value_written_after_breaks(x):
    y = x * 2  # a value of the trace, carried across the breaks below
    float(y.sum())
    float(y[1, 0])
    y[0] = -1
    z = y
    float(z.sum())
    z += 1
    return y, x


def copy_of_an_argument_after_a_break(x):
    float(x.sum())
    c = x.copy()
    float(c.sum())
    c[0] = 99.0
    return c, x, c[1:] + 0


def mask_loop(x, n):
    out = np.zeros(n)
    for i in range(n):
        m = x > i / n
        out[i] = x[m].sum()  # a break per iteration
        x[m] *= 0.5
    return out, x


def alias_of_an_argument(x):
    y = x
    float(x.sum())
    y += 1
    float(y.max())
    return x, y, x.T


def argument_unchanged_by_breaks(x, y):
    a = float(x.sum())
    b = float(y.min())
    return x, y, a + b


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [write_after_breaks, argument_unchanged_by_breaks])
def test_arguments_through_breaks(fn, backend):
    calls = [(np.arange(n, dtype=np.float64) % 3 + 1, np.linspace(1, 2, n)) for n in (5, 5, 6, 5)]
    check(fn, *calls, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [carried_value_written_after_breaks, copy_of_an_argument_after_a_break,
                                alias_of_an_argument])
def test_values_through_breaks(fn, backend):
    calls = [(np.arange(n * 3, dtype=np.float64).reshape(n, 3) % 4 + 1,) for n in (2, 2, 3, 2)]
    check(fn, *calls, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_loop_with_a_break_per_iteration(backend):
    rng = np.random.default_rng(1)
    calls = [(rng.random((6, 5)), 4), (rng.random((6, 5)), 4), (rng.random((7, 5)), 3)]
    check(mask_loop, *calls, backend=backend)


def test_a_break_copies_no_argument():
    # The segment before each break computes one reduction; its arguments are listed as its
    # results (explain shows them) but none is copied: one kernel per reduction, plus the last
    # segment's.
    def f(x, y):
        a = float(x.sum())
        b = float((y * 2).sum())
        return x + a + b

    x, y = np.ones((50, 40)), np.ones((50, 40))
    cf = npc.compile(f)
    cf(x, y)
    before = npc.compiler.stats()["kernels_run"]
    np.testing.assert_array_equal(cf(x, y), f(x, y))
    assert npc.compiler.stats()["kernels_run"] - before == 3
    e = npc.explain(f)(x, y)
    assert e.graph_count == 3 and e.graph_break_count == 2
    assert "# unread output" in e.graphs[1]


def result_viewing_another_result(x):
    c = x * 2
    return c, c[1:]


def test_result_viewing_another_result_fused():
    check(result_viewing_another_result, (np.ones((3, 3)),), backend="fused")

"""Compiled functions called at several sizes (automatic dynamic shapes): products whose core
dims are different symbols stay graph nodes (Note [products of dynamic sizes] in
bind_linalg.cpp), and views that need symbolic sizes make those dims static instead of
breaking the graph on every call (Note [dims made static] in compiler/_api.py). Values,
dtypes, warnings and writes are compared with NumPy; the counts of traces and breaks show
which path ran. Float values are small integers, so products are exact in any order."""
import numpy as np
import pytest

import npc
from npc import compiler
from _compile_diff import BACKENDS, assert_same_as_numpy


def _ints(rng, shape, dtype=np.float64):
    return rng.integers(-4, 5, shape).astype(dtype)


def _matvec_args(n, dtype=np.float64):
    rng = np.random.default_rng(n)
    return _ints(rng, (n, n + 2), dtype), _ints(rng, n + 2, dtype), _ints(rng, n, dtype)


def matvec(A, x, y):
    return A @ x


def vecmat(A, x, y):
    return y @ A


def dot_transposed(A, x, y):
    return np.dot(A.T, y) + 1


def atax(A, x, y):
    return A.T @ (A @ x)


def bicg(A, x, y):
    return y @ A, A @ x


def rank_one_update(A, x, y):
    return A - np.outer(y, x)


def _calls(make, sizes=(4, 6, 8, 8, 11)):
    return [make(n) for n in sizes]


@pytest.mark.parametrize("fn", [matvec, vecmat, dot_transposed, atax, bicg, rank_one_update])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("backend", BACKENDS)
def test_products_of_dynamic_sizes_stay_in_the_graph(fn, dtype, backend):
    compiler.reset()
    cf = npc.compile(fn, backend=backend)
    for args in _calls(lambda n: _matvec_args(n, dtype)):
        assert_same_as_numpy(cf, fn, *args)
    st = compiler.stats()
    # One static trace, then one symbolic trace that serves every later size.
    assert st["traces"] == 2 and st["graph_breaks"] == 0, st


def batched(a, b):
    return a @ b


@pytest.mark.parametrize("backend", BACKENDS)
def test_batched_products_of_dynamic_sizes(backend):
    rng = np.random.default_rng(0)
    compiler.reset()
    cf = npc.compile(batched, backend=backend)
    for n in (2, 3, 5, 5):
        assert_same_as_numpy(cf, batched, _ints(rng, (n, 3, n + 1)), _ints(rng, (n, n + 1, 2)))
    st = compiler.stats()
    assert st["traces"] == 2 and st["graph_breaks"] == 0, st


def test_product_shape_errors_at_dynamic_sizes():
    """Sizes that do not match still raise NumPy's error (the retrace's eager product)."""
    compiler.reset()
    cf = npc.compile(matvec)
    for n in (4, 6):
        cf(*_matvec_args(n))
    A, x, y = _matvec_args(7)
    with pytest.raises(ValueError) as got:
        cf(A, x[:-1], y)
    with pytest.raises(ValueError) as want:
        matvec(A, x[:-1], y)
    assert str(got.value) == str(want.value)


def first_row(A, x, y):
    return np.where(x > 0, x, A[0])


def shifted(A, x, y):
    return np.stack([x[:-2], y]) * 2


def column_write(A, x, y):
    B = A.copy()
    B[:, 0] = y
    B[1] += x
    return B


def diagonal_scaled(A, x, y):
    return np.diag(A[:, 2:]) * y


def inner_block(A, x, y):
    A[1:-1, 1:-1] += 1
    return (A[:, :-2] * y[:, None]).sum(axis=1) + y


@pytest.mark.parametrize("fn", [first_row, shifted, column_write, diagonal_scaled, inner_block])
@pytest.mark.parametrize("backend", BACKENDS)
def test_views_of_varying_sizes_make_dims_static(fn, backend):
    compiler.reset()
    cf = npc.compile(fn, backend=backend)
    sizes = (4, 6, 8, 8, 11, 6)
    for args in _calls(_matvec_args, sizes):
        assert_same_as_numpy(cf, fn, *args)
    st = compiler.stats()
    # A trace per distinct size (4, 6, 8, 11), none per repeated one, and no breaks.
    assert st["graph_breaks"] == 0 and st["traces"] == 4, st
    assert st["cache_hits"] == 2, st


def view_of_one_argument(A, x):
    return A.sum(axis=0) + x[1:].sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_other_dims_stay_dynamic(backend):
    """Only the viewed buffer's dims become static: A's sizes stay symbols."""
    rng = np.random.default_rng(1)
    compiler.reset()
    cf = npc.compile(view_of_one_argument, backend=backend)
    calls = [((3, 5), 4), ((4, 6), 4), ((5, 7), 4), ((6, 8), 4), ((2, 3), 9)]
    for shape, m in calls:
        assert_same_as_numpy(cf, view_of_one_argument, _ints(rng, shape), _ints(rng, m))
    st = compiler.stats()
    # 3x5 static; 4x6 symbolic (x's size unchanged); 5x7 and 6x8 reuse it; x's new size
    # traces once more, with x's dim static and A's still symbolic.
    assert st["graph_breaks"] == 0 and st["traces"] == 3, st


@pytest.mark.parametrize("backend", BACKENDS)
def test_explicit_dynamic_keeps_the_break(backend):
    """dynamic=True and npc.mark_dynamic keep the symbols: the view breaks the graph."""
    compiler.reset()
    cf = npc.compile(first_row, backend=backend, dynamic=True)
    for args in _calls(_matvec_args, (4, 6, 6)):
        assert_same_as_numpy(cf, first_row, *args)
    assert compiler.stats()["graph_breaks"] > 0

    compiler.reset()
    cf = npc.compile(first_row, backend=backend)
    for n in (4, 6, 6):
        A, x, y = _matvec_args(n)
        compiler.mark_dynamic(x, 0)
        got = cf(A, x, y)
        np.testing.assert_array_equal(got, first_row(A, x, y))
        assert got.dtype == np.float64
    assert compiler.stats()["graph_breaks"] > 0


def writes_then_view(A, x, y):
    A *= 2
    x += 1
    return A[0] + x[:-2].sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_abandoned_trace_leaves_arguments_unchanged(backend):
    """The trace that stops at the view has written nothing into the arguments."""
    compiler.reset()
    cf = npc.compile(writes_then_view, backend=backend)
    for args in _calls(_matvec_args, (4, 6, 8)):
        assert_same_as_numpy(cf, writes_then_view, *args)
    assert compiler.stats()["graph_breaks"] == 0


def view_in_a_handler(A, x, y):
    try:
        r = x[:-2] * 2
    except Exception:  # noqa: BLE001  (the trace's stop at the view must not land here)
        r = y
    return r + A[0, 0]



def tail_two(v):
    return v[-2:] * 1


def head_three_zeroed(x):
    x[:3] = 0
    return x.sum()


def first_columns(M):
    return M[:, -3:] + 0


@pytest.mark.parametrize("fn, shapes", [(tail_two, [(3,), (2,), (4,), (5,)]),
                                        (head_three_zeroed, [(4,), (3,), (5,), (6,)]),
                                        (first_columns, [(2, 4), (2, 3), (2, 5), (2, 6)])])
@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_slices_that_cover_the_axis_at_one_size(fn, shapes, dynamic, backend):
    """A slice traced where it covers the whole axis is no identity at other sizes (Note
    [slices that cover the axis] in src/tracer/trace_nodes.cpp)."""
    compiler.reset()
    cf = npc.compile(fn, backend=backend, dynamic=dynamic)
    for s in shapes:
        assert_same_as_numpy(cf, fn, np.arange(1.0, 1.0 + np.prod(s)).reshape(s))


def handler_raises(A, x, y):
    try:
        r = x[:-2] * 2
    except Exception as e:  # noqa: BLE001
        raise ValueError("the handler ran") from e
    return r


@pytest.mark.parametrize("fn", [view_in_a_handler, handler_raises])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_handler_of_the_program_does_not_see_the_stop(fn, backend):
    """The trace's stop at a view (Note [dims made static]) is no exception of the program:
    its `except Exception` neither swallows it nor turns it into its own."""
    compiler.reset()
    cf = npc.compile(fn, backend=backend)
    for args in _calls(_matvec_args, (4, 6, 8, 8)):
        assert_same_as_numpy(cf, fn, *args)
    assert compiler.stats()["graph_breaks"] == 0

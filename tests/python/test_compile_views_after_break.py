"""npc.compile of functions that return views of their arguments after a graph break or a
write, called with new sizes (dynamic shapes: the second size makes dims symbolic), and
functions whose segments equal earlier ones except for inputs nothing reads (Note [symbols
after a break] in src/tracer/trace_nodes.cpp, Note [segment cache] in bind_tracer.cpp). Every
call is compared with the same function run by NumPy: result, dtype, shape and the
arguments afterwards."""
import warnings

import numpy as np
import pytest

import npc
from npc import compiler

BACKENDS = ("eager", "fused")


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-compile-views-after-break")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def outcome(fn, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(*args)
        except Exception as e:  # noqa: BLE001  (compared with NumPy's)
            r = (type(e), str(e))
    return r, [(m.category, str(m.message)) for m in w]


def assert_same(got, want):
    if isinstance(want, tuple) and len(want) == 2 and isinstance(want[0], type):
        assert got == want
        return
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            assert_same(g, w)
        return
    assert type(got) is type(want), (type(got), type(want), got, want)
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    np.testing.assert_array_equal(g, w)


def check_sizes(fn, shapes, backend, dtype=np.float64):
    cf = npc.compile(fn, backend=backend)
    for shape in shapes:
        x = (np.arange(np.prod(shape), dtype=np.float64).reshape(shape) % 5 + 1).astype(dtype)
        y = x.copy()
        got, gw = outcome(cf, x)
        want, ww = outcome(fn, y)
        assert_same(got, want)
        np.testing.assert_array_equal(x, y)
        assert gw == ww


def f_break(x):
    float(x[0])
    return x.reshape(-1, 1)


def f_write(x):
    x[0] = 1
    return x[None]


def after_break(expr):
    def f(x):
        float(x.flat[0])
        return eval(expr)
    f.__name__ = f.__qualname__ = f"after_break_{expr}"
    return f


AFTER_BREAK = ["x.ravel()", "x[..., ::-2]", "np.expand_dims(x, 0)", "np.pad(x, 1)", "np.median(x)",
               "np.quantile(x, 0.3)", "np.unique(x)", "np.nonzero(x)", "x.T", "x[1:]", "x",
               "x.reshape(-1, 1) + 1", "np.sort(x)[::-1]"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [f_break, f_write], ids=["break", "write"])
def test_view_of_an_argument_at_new_sizes(fn, backend):
    check_sizes(fn, [(7,), (8,), (9,), (8,)], backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("expr", AFTER_BREAK)
def test_views_and_functions_of_an_argument_after_a_break(expr, backend):
    check_sizes(after_break(expr), [(7,), (8,), (9,)], backend)


def column_after_break(x):
    float(x[0, 0])
    return x[:, 0]


def write_then_view_2d(x):
    x[:, 1] = -1
    return x[..., ::-2], x.T[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [column_after_break, write_then_view_2d])
def test_2d_views_after_a_break_or_write(fn, backend):
    check_sizes(fn, [(3, 4), (3, 5), (4, 6), (3, 5)], backend)


def argmin_then_write(a):
    v = a.argmin()
    a += 1
    return v


def argmax_condition(a):
    if int(a.argmax()) == 0:
        pass
    return a


@pytest.mark.parametrize("backend", BACKENDS)
def test_argmin_then_write_at_new_sizes(backend):
    check_sizes(argmin_then_write, [(1, 4), (1, 5), (1, 6)], backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_segments_equal_but_for_unread_inputs(backend):
    # The segment after the break reads one of two live inputs; an earlier function's segment
    # has the same text with one input: the cached executable must not be reused for it.
    check_sizes(after_break("x"), [(3,), (4,)], backend)
    check_sizes(argmax_condition, [(3,), (4,), (5,)], backend)
    check_sizes(after_break("np.quantile(x, 0.3)"), [(3,), (4,)], backend)


def host_call_then_argmax_break(a0, a2):
    v3 = np.arange(np.size(a2))          # a host call of the graph
    bool(int(a0.argmax()) == 0)          # at symbolic sizes: a break inside argmax
    return v3


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_after_a_host_call_at_new_sizes(backend):
    # The segment's graph (holding the host call's Python function) is released at the break,
    # inside an op that runs without the GIL: it crashed the process.
    from _compile_diff import check
    check(host_call_then_argmax_break, *[(np.ones(n, bool), np.array(1, np.uint8)) for n in (3, 4, 5, 4)],
          backend=backend)


# A slice along a symbolic axis breaks the graph; the slice stays a view of the traced array
# (writes into the array after the break show in it, and writes into it in the array).
def slice_then_write_base(a):
    x = a[1:]
    a += 1
    return x * 1


def strided_slice_write_both(a):
    x = a[1:, ::2]
    a[...] += 1
    x[0] = 7
    return x * 1, a * 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [slice_then_write_base, strided_slice_write_both])
def test_slice_with_symbolic_sizes_stays_a_view(fn, backend):
    from _compile_diff import check
    check(fn, *[(np.arange(n * 2.0).reshape(n, 2),) for n in (3, 4, 5, 4)], backend=backend)


# A view realized at a break (np.flip of a view needs a concrete value) while the array stays
# traced through another handle: the writes into the array recorded after the break show in it.
def flip_of_view_then_write(a1):
    v1 = a1[:]
    v3 = np.flip(v1)
    a1[:] = True
    return v3


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_realized_at_a_break_sees_later_writes(backend):
    from _compile_diff import check
    check(flip_of_view_then_write, *[(np.arange(n, dtype=np.int32),) for n in (3, 3, 4, 5)], backend=backend)


# The same with a view that NumPy code made at the break (np.expand_dims of a moved axis needs
# a concrete value): it comes back in a Storage of its own, over the same memory.
def expand_dims_of_moved_axis_then_write(a1):
    v2 = np.expand_dims(np.moveaxis(a1, 0, -1), 0)
    a1[:, ::-2, :] = False
    return np.ascontiguousarray(v2)


def expand_dims_then_scaled(a1):
    v2 = np.expand_dims(np.moveaxis(a1, 0, -1), 0)
    a1[1:] *= 3
    return v2 + 0


# With symbolic sizes (dynamic=True) the strided view has no exact node: the graph breaks
# there and the view stays traced (Note [views of symbolic sizes] in trace_nodes.cpp). With
# automatic dynamic sizes (the retrace at new sizes) the dims are made static instead (Note
# [dims made static] in _api.py): no break, one trace per size.
@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("fn", [expand_dims_of_moved_axis_then_write, expand_dims_then_scaled])
@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_view_made_at_a_break_sees_later_writes(fn, backend, dynamic):
    from _compile_diff import check
    check(fn, *[(np.ones((n, n, 1)),) for n in (3, 3, 4, 5, 5)], backend=backend, dynamic=dynamic)
    stats = compiler.stats()
    if dynamic is None:
        assert stats["graph_breaks"] == 0 and stats["traces"] == 3, stats
    else:
        assert stats["graph_breaks"] > 0, stats


# A NumPy function that npc runs through NumPy (a fallback) returns a view of an array realized
# at the break while the argument stays traced through another handle: the view is a traced
# view of the argument (Note [NumPy views of inputs] in trace_nodes.cpp), so the writes the
# segment records later show in it, and a returned view is a view of the argument.
def sliding_window_then_write(a):
    float(a[0, 0])
    v = np.lib.stride_tricks.sliding_window_view(a[:], 2, axis=1)
    a[:, 1] = -1
    return v + 0


def sliding_window_returned(a):
    float(a[0, 0])
    v = np.lib.stride_tricks.sliding_window_view(a[1:], 2, axis=0)
    a[::2] *= 3
    v[0, 0] = 7
    return v


@pytest.mark.parametrize("fn", [sliding_window_then_write, sliding_window_returned])
@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_fallback_view_sees_later_writes(fn, backend):
    from _compile_diff import check
    check(fn, *[(np.arange(n * 3.0).reshape(n, 3),) for n in (3, 3, 4, 5)], backend=backend)

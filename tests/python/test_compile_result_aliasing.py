"""Results that are arguments, or views of them, come back as NumPy returns them (Note [results
that view inputs] in src/tracer/trace.hpp and python/npc/compiler/_results.py): the argument object
itself (`return a`, `np.add(a, 1, out=o)`), and views of the caller's array that share its
memory, have NumPy's base and write through to it (`a[1:]`, `a.T`, `a.reshape(...)`), on the
tracing call and on every replay, with new sizes too. Each program runs with NumPy and
compiled (both backends) on equal arguments, and the two are compared."""
import numpy as np
import pytest

import npc
from npc import compiler

BACKENDS = ["fused", "eager"]

G = np.arange(5.0)


def _leaves(r):
    if isinstance(r, (tuple, list)):
        out = []
        for v in r:
            out.extend(_leaves(v))
        return out
    return [r]


def _owner(a):
    return a if a.base is None else a.base


def _relations(result, args):
    """For each array of `result`: which arguments it is, has as base, or shares memory with."""
    arrays = [a for a in _leaves(list(args)) if isinstance(a, (np.ndarray, npc.ndarray))]
    rel = []
    for r in _leaves(result):
        if not isinstance(r, (np.ndarray, npc.ndarray)):
            rel.append(("scalar",))
            continue
        rel.append((type(r) is np.ndarray,
                    tuple(k for k, a in enumerate(arrays) if r is a),
                    tuple(k for k, a in enumerate(arrays) if r.base is not None and r.base is _owner(a)),
                    tuple(k for k, a in enumerate(arrays) if np.shares_memory(r, a)),
                    r.shape, tuple(st for n, st in zip(r.shape, r.strides) if n != 1),  # size-1 axes: any stride
                    bool(r.flags.writeable)))
    return rel


def _copy(args):
    out = []
    for a in args:
        if isinstance(a, list):
            out.append(_copy(a))
        elif isinstance(a, np.ndarray):
            out.append(a.copy(order="K"))
        else:
            out.append(a)
    return out


def _check(fn, make_args, backend, calls=3, write=True):
    """Runs fn with NumPy and compiled on equal arguments `calls` times (make_args(i) makes the
    i-th call's arguments) and compares results, identities, bases, memory sharing and the
    arguments after a write through each result that views them."""
    cf = npc.compile(fn, backend=backend)
    for i in range(calls):
        a_np, a_c = make_args(i), make_args(i)
        exp, got = fn(*a_np), cf(*a_c)
        for e, g in zip(_leaves(exp), _leaves(got)):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e), err_msg=f"call {i}")
        assert _relations(got, a_c) == _relations(exp, a_np), f"call {i}"
        if write:
            for e, g in zip(_leaves(exp), _leaves(got)):
                if isinstance(e, np.ndarray) and e.flags.writeable and e.size:
                    e[...] = -7
                    g[...] = -7
            for e, g in zip(_leaves(a_np), _leaves(a_c)):
                if isinstance(e, np.ndarray):
                    np.testing.assert_array_equal(np.asarray(g), e, err_msg=f"call {i}: arguments after writes")
    return cf


def _vec(n0=6):
    return lambda i: [np.arange(float(n0 + i))]


VIEWS = {
    "identity": lambda a: a,
    "slice": lambda a: a[1:],
    "step": lambda a: a[::2],
    "reverse": lambda a: a[::-1],
    "newaxis": lambda a: a[None],
    "reshape": lambda a: a.reshape(2, -1),
    "ravel": lambda a: a.ravel(),
    "view": lambda a: a.view(),
    "ellipsis": lambda a: a[...],
    "tuple": lambda a: (a, a + 1, a[1:], a),
    "expand_dims": lambda a: np.expand_dims(a, 0),
    "broadcast_to": lambda a: np.broadcast_to(a, (2,) + a.shape),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(VIEWS))
def test_views_of_a_vector(name, backend):
    fn = VIEWS[name]
    # Static size (trace, replay, replay), then changing sizes (dynamic dims where the view allows).
    _check(fn, lambda i: [np.arange(6.0)], backend)
    _check(fn, lambda i: [np.arange(float(6 + 2 * i))], backend, calls=4)


MATRIX_VIEWS = {
    "T": lambda a: a.T,
    "transpose": lambda a: np.transpose(a),
    "row": lambda a: a[1],
    "column": lambda a: a[:, 0],
    "block": lambda a: a[1:, ::2],
    "reshape_flat": lambda a: a.reshape(-1),
    "swapaxes": lambda a: a.swapaxes(0, 1),
    "T_reshape": lambda a: a.T.T[None],
    "squeeze_after_newaxis": lambda a: a[:, None].squeeze(1),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
@pytest.mark.parametrize("name", list(MATRIX_VIEWS))
def test_views_of_a_matrix(name, layout, backend):
    def make(i):
        a = np.arange(24.0).reshape(4, 6)
        if layout == "F":
            return [np.asfortranarray(a)]
        if layout == "strided":
            return [np.arange(48.0).reshape(8, 6)[::2, 1:]]
        return [a]
    _check(MATRIX_VIEWS[name], make, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_transpose_with_dynamic_sizes_replays(backend):
    compiler.reset()
    cf = _check(lambda a: (a.T, a * 2), lambda i: [np.ones((3 + i, 2))], backend, calls=5)
    assert compiler.stats()["traces"] == 2  # the second size made the dim symbolic
    assert compiler.stats()["cache_hits"] == 3
    del cf


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_parts(backend):
    _check(lambda z: (z.real, z.imag[::2]), lambda i: [np.arange(6.0) + 1j * np.arange(6.0)], backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_argument_is_returned(backend):
    def f(a, o):
        return np.add(a, 1, out=o)

    def g(a, o):
        r = np.multiply(a, 2, out=o[1:])
        return r, o

    _check(f, lambda i: [np.arange(4.0), np.zeros(4)], backend, write=False)
    _check(g, lambda i: [np.arange(3.0), np.zeros(4)], backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_written_argument_and_its_view(backend):
    def f(x):
        x[0] = 1
        return x[None], x

    _check(f, lambda i: [np.arange(float(7 + i))], backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_after_a_graph_break(backend):
    def f(x):
        float(x[0])
        return x.reshape(-1, 1), x[1:]

    _check(f, lambda i: [np.arange(float(7 + i))], backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_views_of_captured_global(backend):
    _check(lambda: (G, G[1:], G.reshape(1, -1)), lambda i: [], backend, write=False)
    before = G.copy()
    cf = npc.compile(lambda: G[1:], backend=backend)
    for _ in range(3):
        r = cf()
        assert r.base is G
    r[0] = 100.0
    assert G[1] == 100.0
    G[...] = before


@pytest.mark.parametrize("backend", BACKENDS)
def test_arguments_in_containers_and_keywords(backend):
    def f(xs, scale=None):
        return xs[0][1:], xs[1], scale.T

    _check(lambda xs, s: f(xs, scale=s), lambda i: [[np.arange(4.0), np.ones(3)], np.ones((2, 3))], backend)
    cf = npc.compile(f, backend=backend)
    for _ in range(3):
        xs, s = [np.arange(4.0), np.ones(3)], np.ones((2, 3))
        r = cf(xs, scale=s)
        assert r[0].base is xs[0] and r[1] is xs[1] and r[2].base is s


@pytest.mark.parametrize("backend", BACKENDS)
def test_npc_arguments_give_npc_views(backend):
    cf = npc.compile(lambda a: (a, a[1:], a.T), backend=backend)
    for _ in range(3):
        a = npc.arange(6.0).reshape(2, 3).copy()
        r = cf(a)
        assert r[0] is a
        assert type(r[1]) is npc.ndarray and r[1].base is a and np.shares_memory(r[1], a)
        assert type(r[2]) is npc.ndarray and r[2].base is a and r[2].strides == a.T.strides
        r[1][...] = 5
        assert (a[1:] == 5).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_views_keep_the_type_of_the_array_they_view(backend):
    # Mixed NumPy and npc arguments: computed results are npc arrays; a view is of its array's
    # type, as in eager code.
    cf = npc.compile(lambda a, b: (a[1:], b[1:], a + b), backend=backend)
    for _ in range(3):
        a, b = np.ones(3), npc.ones(3)
        r = cf(a, b)
        assert type(r[0]) is np.ndarray and r[0].base is a
        assert type(r[1]) is npc.ndarray and r[1].base is b
        assert type(r[2]) is npc.ndarray


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_only_argument_views_stay_read_only(backend):
    def make(i):
        a = np.arange(4.0)
        a.flags.writeable = False
        return [a]
    _check(lambda a: (a, a[1:]), make, backend, write=False)


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_view_realized_at_a_break(backend):
    def f(x):
        return np.asarray(x)[1:], x.sum()

    _check(f, lambda i: [np.arange(float(5 + i))], backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_of_a_written_result_is_fresh(backend):
    # A view of a computed value is no view of the argument (the value is the trace's own).
    def f(x):
        y = x * 2
        float(y[0])
        return y[1:], x[::-1]

    _check(f, lambda i: [np.arange(float(5 + i))], backend)


AS_ARRAY = {
    "asarray": lambda x: np.asarray(x),
    "asanyarray": lambda x: (np.asanyarray(x), x.sum()),
    "array_no_copy": lambda x: np.array(x, copy=False),
    "asarray_of_view": lambda x: (np.asarray(x[1:]), x[::2]),
    "asarray_then_view": lambda x: np.asarray(x)[1:],
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(AS_ARRAY))
def test_asarray_of_an_argument_is_the_argument(name, backend):
    # np.asarray(a) of a NumPy array is `a` itself; its views have `a` as base. A function
    # converting a traced argument has a graph break: its calls are traced again or, once timed
    # slower, run eagerly on npc views of the arguments (Note [eager npc calls]): the results
    # are the caller's objects and views of them in every mode, so the check runs many calls.
    _check(AS_ARRAY[name], lambda i: [np.arange(6.0)], backend, calls=8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_views_of_arguments_after_a_break_keep_numpy_bases(backend):
    def f(x, y):
        float(x[0])
        return x[1:], y.T, y[0], x.reshape(2, -1)

    _check(f, lambda i: [np.arange(6.0), np.ones((2, 3))], backend, calls=8)


@pytest.mark.parametrize("fn", [VIEWS["slice"], VIEWS["tuple"], VIEWS["reshape"], *AS_ARRAY.values()])
def test_eager_npc_calls_return_numpy_objects(fn):
    # The "npc" eager mode (Note [eager npc calls]) runs only when timing picks it: called
    # directly here, its results must relate to the arguments as NumPy's do.
    cf = npc.compile(fn)
    a_np, a_c = np.arange(6.0), np.arange(6.0)
    exp, got = fn(a_np), cf._run_eager("npc", (a_c,), {})
    assert _relations(got, [a_c]) == _relations(exp, [a_np])

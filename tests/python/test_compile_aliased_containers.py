"""A list or dict passed twice, or nested twice, is one object in the traced program (Note
[aliased containers] in python/npc/compiler/_results.py): a change through one name shows through
the other, as in NumPy, and a later call whose containers alias differently does not replay
the aliased trace. Each program runs with NumPy and compiled (both backends) on equal
arguments; results and the caller's containers afterwards are compared."""
import numpy as np
import pytest

import npc

BACKENDS = ["fused", "eager"]


def _same(got, exp):
    if isinstance(exp, (list, tuple)):
        assert type(got) is type(exp) and len(got) == len(exp), (got, exp)
        for g, e in zip(got, exp):
            _same(g, e)
    elif isinstance(exp, dict):
        assert type(got) is dict and list(got) == list(exp), (got, exp)
        for k in exp:
            _same(got[k], exp[k])
    elif isinstance(exp, np.ndarray):
        assert isinstance(got, (np.ndarray, npc.ndarray)), got
        np.testing.assert_array_equal(np.asarray(got), exp)
    else:
        assert got == exp, (got, exp)


def _run(fn, make, backend, calls=3):
    """Calls `fn` with NumPy and compiled; make(i) gives (args, what to compare afterwards)."""
    cf = npc.compile(fn, backend=backend)
    for i in range(calls):
        a_np, a_c = make(i), make(i)
        exp, got = fn(*a_np), cf(*a_c)
        _same(got, exp)
        _same(list(a_c), list(a_np))
    return cf


def _setitem_through_first(xs, ys):
    xs[0] = xs[0] + 1
    return ys[0] * 2


def _append_through_first(xs, ys):
    xs.append(xs[0] * 3)
    return len(ys), ys[-1] + 0


def _nested_twice(outer):
    outer[0][1] = outer[1][0] - 5
    return outer[1][1] * 1, len(outer[0])


def _dict_twice(d1, d2):
    d1["k"] = d1["k"] * 3
    return d2["k"] + 1


def _read_only(xs, ys):
    return xs[0] + ys[1]


def _list_pair(i):
    lst = [np.arange(3.0) + i, np.ones(3)]
    return [lst, lst]


def _list_apart(i):
    return [[np.arange(3.0) + i, np.ones(3)], [np.arange(3.0) + i, np.ones(3)]]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [_setitem_through_first, _append_through_first, _read_only],
                         ids=lambda f: f.__name__)
def test_list_passed_twice(fn, backend):
    cf = _run(fn, _list_pair, backend)
    # The same function called without aliasing afterwards, and with it again.
    for i in range(2):
        a_np, a_c = _list_apart(i), _list_apart(i)
        _same(cf(*a_c), fn(*a_np))
        _same(a_c, a_np)
        a_np, a_c = _list_pair(i), _list_pair(i)
        _same(cf(*a_c), fn(*a_np))
        _same(a_c, a_np)


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_passed_apart_first(backend):
    cf = _run(_setitem_through_first, _list_apart, backend)
    a_np, a_c = _list_pair(0), _list_pair(0)
    _same(cf(*a_c), _setitem_through_first(*a_np))
    _same(a_c, a_np)


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_nested_twice(backend):
    def make(i):
        inner = [np.arange(3.0) + i, np.full(3, 2.0)]
        return [[inner, inner]]
    _run(_nested_twice, make, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dict_passed_twice(backend):
    def make(i):
        d = {"k": np.arange(4.0) + i}
        return [d, d]
    cf = _run(_dict_twice, make, backend)
    a_np, a_c = [{"k": np.ones(4)}, {"k": np.ones(4)}], [{"k": np.ones(4)}, {"k": np.ones(4)}]
    _same(cf(*a_c), _dict_twice(*a_np))
    _same(a_c, a_np)


@pytest.mark.parametrize("backend", BACKENDS)
def test_aliasing_is_part_of_the_guards(backend):
    cf = npc.compile(_read_only, backend=backend)
    lst = [np.arange(3.0), np.ones(3)]
    cf(lst, lst)
    guards = [t for _, t in cf._labels((lst, lst), {})]
    assert "the same list as container 0" in guards
    other = [np.arange(3.0), np.ones(3)]
    assert "the same list as container 0" not in [t for _, t in cf._labels((lst, other), {})]

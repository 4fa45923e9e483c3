"""Lists and dicts passed to a compiled function are the caller's objects: what the function
does to them (item assignment, append, pop, nested lists, dict entries) reaches the caller on
every call, as in NumPy (Note [mutated arguments] in python/npc/compiler/_results.py). Both
backends, on the tracing call and on later calls, against NumPy running the same function."""
import copy
import warnings

import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-mutated-arguments")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def _same(got, want, what):
    assert type(got) is type(want), (what, got, want)
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want), (what, got, want)
        for g, w in zip(got, want):
            _same(g, w, what)
    elif isinstance(want, dict):
        assert list(got) == list(want), (what, got, want)
        for k in want:
            _same(got[k], want[k], what)
    elif isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape, (what, got, want)
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        assert got == want, (what, got, want)


def compare(f, make_args, backend, calls=3):
    """Calls compiled `f` and `f` on fresh arguments from `make_args()`, `calls` times: the
    results and the arguments afterwards (containers included) are the same."""
    cf = npc.compile(f, backend=backend)
    for _ in range(calls):
        got_args, want_args = make_args(), make_args()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = cf(*got_args)
        want = f(*want_args)
        _same(got, want, "result")
        _same(got_args, want_args, "arguments after the call")
    return cf


def rebind_and_append(xs):
    xs[0] = xs[0] + 1
    xs.append(xs[0] * 2)
    return xs[0]


def returns_the_list(xs):
    xs.append(xs[0] * 3.0)
    return xs


def pop_and_insert(xs):
    last = xs.pop()
    xs.insert(0, last + 1)
    return last * 2


def nested(xs):
    xs[1][0] = xs[1][0] - xs[0]
    xs[1].append(7)
    return xs[0] * 1


def dict_entries(d):
    d["b"] = d["a"] * 2
    del d["a"]
    d["n"] = d["n"] + 1
    return d["b"] + 1


def keeps_caller_objects(xs, ys):
    xs.append(ys)
    xs.append(xs[0])
    xs.append(0.5)
    return xs[0] + 1


def with_float(xs, s):
    xs.append(xs[0] * s)
    xs.append(s)
    return xs[0]


def with_break(xs):
    if float(xs[0].sum()) > 0:
        xs.append(xs[0] - 1)
    return xs[0] * 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, make_args", [
    (rebind_and_append, lambda: ([np.zeros(2)],)),
    (returns_the_list, lambda: ([np.arange(3.0)],)),
    (pop_and_insert, lambda: ([np.ones(2), np.arange(2.0)],)),
    (nested, lambda: ([np.ones(2), [np.arange(2.0), 3]],)),
    (dict_entries, lambda: ({"a": np.arange(3.0), "n": 4},)),
    (with_float, lambda: ([np.arange(3.0)], 0.25)),
    (with_break, lambda: ([np.arange(3.0)],)),
])
def test_mutations_reach_the_caller(f, make_args, backend):
    compare(f, make_args, backend)


def append_then_raise(xs, s):
    xs.append(xs[0] * 2)
    xs[0] = xs[0] + s
    xs.append(s)
    raise KeyError("after the changes")


def append_then_shape_error(xs):
    xs.append(xs[0] * 2)
    return xs[0] + np.ones(5)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, make_args", [
    (append_then_raise, lambda: ([np.zeros(2)], 0.5)),
    (append_then_shape_error, lambda: ([np.zeros(2)],)),
])
def test_mutations_before_an_exception_reach_the_caller(f, make_args, backend):
    cf = npc.compile(f, backend=backend)
    for _ in range(3):
        got_args, want_args = make_args(), make_args()
        with pytest.raises(Exception) as got:
            cf(*got_args)
        with pytest.raises(Exception) as want:
            f(*want_args)
        assert type(got.value) is type(want.value) and str(got.value) == str(want.value)
        _same(got_args, want_args, "arguments after the call")


@pytest.mark.parametrize("backend", BACKENDS)
def test_caller_objects_stay_themselves(backend):
    cf = npc.compile(keeps_caller_objects, backend=backend)
    for _ in range(3):
        x, ys = np.arange(3.0), [np.ones(2)]
        xs = [x]
        r = cf(xs, ys)
        np.testing.assert_array_equal(r, x + 1)
        assert len(xs) == 4 and xs[0] is x and xs[1] is ys and xs[2] is x and xs[3] == 0.5
        assert len(ys) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_returned_list_is_the_callers(backend):
    cf = npc.compile(returns_the_list, backend=backend)
    for _ in range(2):
        xs = [np.arange(3.0)]
        assert cf(xs) is xs and len(xs) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_unchanged_list_still_replays(backend):
    cf = npc.compile(lambda xs: xs[0] + xs[1], backend=backend)
    for _ in range(3):
        xs = [np.ones(2), np.arange(2.0)]
        before = copy.copy(xs)
        np.testing.assert_array_equal(cf(xs), np.ones(2) + np.arange(2.0))
        assert len(xs) == 2 and xs[0] is before[0] and xs[1] is before[1]
    assert compiler.stats()["cache_hits"] >= 2

"""A NumPy scalar on the left of an operator whose right operand stands for a NumPy scalar
in a compiled function (a traced scalar result, or one a graph break realized): NumPy runs
its scalar arithmetic ("... encountered in scalar floor_divide"), while an explicit ufunc
call on the same scalars runs the ufunc ("... in floor_divide"). Note [reflected scalar
operators] in python/npc/_interop.py. Compared with NumPy (values, types, warnings) on both
backends, tracing call and replays."""
import operator

import numpy as np
import pytest

from _compile_diff import BACKENDS, check

# Operator syntax (a Python frame executing the operator), named for the test ids.
def _named(name, fn):
    fn.__name__ = name
    return fn


OPERATORS = [_named("add", lambda x, y: x + y), _named("sub", lambda x, y: x - y), _named("mul", lambda x, y: x * y),
             _named("truediv", lambda x, y: x / y), _named("floordiv", lambda x, y: x // y),
             _named("mod", lambda x, y: x % y), _named("pow", lambda x, y: x ** y), _named("lt", lambda x, y: x < y),
             _named("le", lambda x, y: x <= y), _named("eq", lambda x, y: x == y), _named("ne", lambda x, y: x != y),
             _named("gt", lambda x, y: x > y), _named("ge", lambda x, y: x >= y)]
INT_OPERATORS = [_named("and", lambda x, y: x & y), _named("or", lambda x, y: x | y), _named("xor", lambda x, y: x ^ y),
                 _named("lshift", lambda x, y: x << y), _named("rshift", lambda x, y: x >> y),
                 _named("floordiv", lambda x, y: x // y), _named("mod", lambda x, y: x % y)]
UFUNCS = [np.floor_divide, np.divide, np.remainder, np.add, np.less]


def _realized(op):
    def f(a):
        s = np.nanmin(a)  # needs a concrete value (a graph break): a realized scalar result
        return op(np.nansum(s), s), op(np.float32(2.5), s), op(s, np.float64(0.0))
    return f


def _traced(op):
    def f(a):
        s = a.min()  # a traced scalar result
        return op(np.float64(a[0]), s), op(np.float32(2.5), s), op(s, np.float64(0.0))
    return f


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("make", [_realized, _traced], ids=["realized", "traced"])
@pytest.mark.parametrize("op", OPERATORS, ids=lambda o: o.__name__)
def test_numpy_scalar_left_of_a_scalar_result(op, make, backend):
    f = make(op)

    with np.errstate(all="warn"):
        check(f, (np.array([3.0, 0.0, 1.0]),), (np.array([0.0, 2.0]),), (np.array([np.inf, 1.0, -1.0]),),
              backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", INT_OPERATORS, ids=lambda o: o.__name__)
def test_integer_scalars(op, backend):
    def f(a):
        s = np.nanmin(a) if a.dtype.kind == "f" else a.max()
        return op(np.int64(7), s), op(np.int8(3), s)

    check(f, (np.array([0, 2, 1]),), (np.array([3, 1]),), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("uf", UFUNCS, ids=lambda u: u.__name__)
def test_explicit_ufunc_calls_stay_ufunc_calls(uf, backend):
    def f(a):
        s = np.nanmin(a)
        return uf(np.float64(0.0), s), uf(np.nansum(s), s)

    with np.errstate(all="warn"):
        check(f, (np.array([0.0, 2.0]),), (np.array([1.0, 0.0]),), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_place_operator_on_a_numpy_scalar(backend):
    def f(a):
        s = np.nanmin(a)
        t = np.float64(0.0)
        t //= s
        u = np.float64(1.0)
        u -= s
        return t, u

    with np.errstate(all="warn"):
        check(f, (np.array([0.0, 2.0]),), (np.array([2.0, 3.0]),), backend=backend)


def _helper(a):
    return a * 2


_ALIAS = _helper


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_module_function_under_two_names_is_one_object(backend):
    # Traced code calls module functions as copies (Note [captured arrays] in
    # python/npc/compiler/_guards.py): one copy per function, whatever name reads it.
    def f(a):
        return _helper(a) if _ALIAS is _helper else a

    check(f, (np.arange(3.0),), (np.arange(4.0),), backend=backend)


@pytest.mark.xfail(strict=True, reason="traced code reads module functions as copies (Note [captured arrays] in "
                                       "_guards.py): a function held in a closure cell or an argument is the "
                                       "original, not that copy")
def test_a_module_function_held_in_a_closure_is_the_module_one():
    held = _helper

    def f(a):
        return _helper(a) if held is _helper else a

    check(f, (np.arange(3.0),), backend="eager")


@pytest.mark.xfail(strict=True, reason="a NumPy scalar's operator reaches npc as a ufunc call; npc tells the two apart "
                                       "by the instruction of the calling Python frame, which for operator.truediv "
                                       "(a C function) is a call: NumPy warns 'in scalar divide', npc 'in divide'")
def test_operator_module_functions_on_scalar_results():
    def f(a):
        return operator.truediv(np.float64(1.0), a.min())

    with np.errstate(all="warn"):
        check(f, (np.array([0.0, 2.0]),), backend="eager")

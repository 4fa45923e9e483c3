"""Unary operators of scalar results (`-a[1]`, `abs(s)`, `~a[1]`, `+a.sum()`) give scalar
results as NumPy scalars' do: the 0-d value they compute is marked in the C++ number slots
(Note [scalar results] in src/tracer/trace.hpp), so the function returns a NumPy scalar and
later operators on it run NumPy's scalar arithmetic (an int scalar's `/=` makes a float,
`t = y; y += 1` keeps t, overflow warns "in scalar add"). Against NumPy running the same
function: value and type, warnings, errors; both backends, the tracing call and replays."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-scalar-unary")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


DTYPES = [np.bool_, np.int8, np.int64, np.uint8, np.float32, np.float64, np.complex128]

# Each operator NumPy scalars have (bool has no unary minus, float and complex no `~`:
# NumPy's errors), on an element read, a reduction and a product.
OPERANDS = ["a[1]", "a[-1]", "a.sum()", "a.max()", "np.dot(a, a)"]


def _program(op, operand):
    src = (f"def f(a):\n    y = {op}({operand})\n"
           # what follows depends on y being a scalar: an array would stay 0-d and share t
           "    t = y\n    y += 1\n    z = -(-y)\n    return y, t, z, abs(y) + a[0]\n")
    ns = {"np": np}
    exec(src, ns)  # noqa: S102  (a test program per operator and operand)
    return ns["f"]


def _args(dtype):
    a = (np.arange(4) * 3 - 5).astype(dtype) if np.dtype(dtype).kind != "b" else np.array([True, False, True])
    b = (np.arange(4) * 2 + 1).astype(dtype) if np.dtype(dtype).kind != "b" else np.array([False, True, False])
    return (a,), (b,), (a,)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["-", "+", "abs", "~"])
def test_unary_operator_of_a_scalar_result_equals_numpy(op, dtype, backend):
    for operand in OPERANDS:
        check(_program(op, operand), *_args(dtype), backend=backend)


def int_scalar_divided(a):
    x = -a[1]
    x /= 2  # NumPy's int scalar divided: a float64, where an int 0-d array's /= is a casting error
    y = ~a[2]
    y /= 4
    return x, y


def zero_d_arrays(a):
    # A ufunc of a 0-d array returns a NumPy scalar: the operators of 0-d arrays that are not
    # scalar results give scalar results too.
    z = np.zeros((), a.dtype) + a.reshape(-1)[:1].reshape(())
    w = np.where(a[0] > 0, a[0], a[1])
    return -z, abs(w), +z, z, w


def in_a_loop(a):
    s = a[0]
    for i in range(1, a.shape[0]):
        s = -s + abs(a[i])  # int8: scalar overflow warns "in scalar add" as NumPy's
    return s


def realized(a):
    r = np.max(a)
    r.item()  # a graph break that realizes r
    return -r, abs(r), +r, -(-r)


def realized_int(a):
    r = np.min(a)
    r.item()
    return -r, abs(r), ~r, ~(~r)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unary_results_act_as_numpy_scalars(backend):
    a = np.array([3, -7, 12, 5], np.int64)
    check(int_scalar_divided, (a,), (a + 1,), (a,), backend=backend)
    for dt in (np.float64, np.int32, np.complex64):
        check(zero_d_arrays, (a.astype(dt),), ((a - 4).astype(dt),), (a.astype(dt),), backend=backend)
    x = np.array([100, -100, 27, -128, 5], np.int8)
    check(in_a_loop, (x,), (x[::-1].copy(),), (x,), backend=backend)
    check(realized, (np.array([1.5, -2.5, 4.0]),), (np.array([-1.5, -2.5]),), backend=backend)
    check(realized_int, (np.array([7, -128, 4], np.int8),), (np.array([3, 1], np.int8),), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unary_overflow_and_errors_as_numpy(backend):
    # NumPy's scalar negative and absolute warn on the int minimum; unsigned negation too.
    for dt in (np.int8, np.int16, np.int32, np.int64):
        m = np.iinfo(dt).min
        check(lambda a: (-a[0], abs(a[0]), -a[1], abs(a.min())), (np.array([m, 3], dt),), (np.array([m, 3], dt),),
              backend=backend)
    check(lambda a: -a[0], (np.array([1, 0], np.uint8),), (np.array([0, 2], np.uint8),), backend=backend)
    with np.errstate(over="raise"):
        check(lambda a: -a[0], (np.array([-128, 0], np.int8),), (np.array([-128, 0], np.int8),), backend=backend)
    # Operators a dtype lacks raise NumPy's TypeError.
    check(lambda a: -a[0], (np.array([True, False]),), backend=backend)
    check(lambda a: ~a[0], (np.array([1.5, 2.0]),), backend=backend)

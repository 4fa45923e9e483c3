"""Exceptions of compiled functions are NumPy's: no spurious ones (an element's in-place
operator computes on a scalar, float() of a complex 0-d value warns, a 0-d array reduces
along axis 0), and where two checks fail, NumPy's comes first (a ufunc's casts before its
broadcast). Both backends against NumPy running the same function."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-exceptions")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def element_truediv(a):
    a[0] /= 2
    return a * 1


def element_ops(a):
    a[1, 0] += 2.5
    a[-1, -1] **= 2
    a[0, 1] //= 3
    return a * 1


def element_copy_kept(a):
    x = a[0]
    x += 1
    return a * 1, x * 1


def to_float(x):
    return float(x) + 1


def inplace_divide(a1, v0):
    a1 /= v0
    return a1 * 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, args", [
    (element_truediv, (np.array([3, 4]),)),
    (element_truediv, (np.array([3.0, 4.0]),)),
    (element_ops, (np.arange(6, dtype=np.int16).reshape(3, 2),)),
    (element_copy_kept, (np.arange(3.0),)),
    (to_float, (np.array(1 + 2j),)),
    (lambda x: np.sum(x, axis=0), (np.array(2.0),)),
    (lambda x: np.max(x, axis=-1) + x.min(axis=0), (np.array(2.0),)),
    (lambda x: np.sum(x * 2, axis=0, keepdims=True), (np.array(3, np.int8),)),
    (inplace_divide, (np.ones((2, 3), np.uint8), np.full(4, 2, np.uint8))),
    (inplace_divide, (np.ones((2, 3), np.uint8), np.full((4, 1, 3), 2.0))),
])
def test_numpy_exceptions(f, args, backend):
    check(f, args, args, backend=backend)


def test_eager_ufunc_checks_casts_before_broadcasting():
    a, b = np.ones((2, 3), np.uint8), np.full(4, 2, np.uint8)
    with pytest.raises(np.exceptions.UFuncTypeError if hasattr(np.exceptions, "UFuncTypeError")
                       else TypeError) as want:
        x = a.copy()
        x /= b
    with pytest.raises(type(want.value), match="Cannot cast ufunc 'divide' output"):
        x = npc.asarray(a.copy())
        x /= npc.asarray(b)


def empty_mask_assign(a):
    a[np.zeros(0, bool)] = np.ones((2, 2))
    return a * 1


def empty_mask_assign_row(a):
    a[np.zeros(0, bool)] = [[5]]
    return a * 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [empty_mask_assign, empty_mask_assign_row])
def test_empty_mask_assignment_is_an_index_array(f, backend):
    # A boolean mask of another shape than the array is an (empty) index array: NumPy's
    # broadcast ValueError, not the mask assignment's TypeError about value dimensions.
    check(f, (np.ones(3),), backend=backend)


# Note [integer powers] in src/tracer/trace_hooks.cpp: a negative integer exponent raises whether or
# not the power is used, and for the values of each call (not only those of the trace).
def unused_int_power(a, b):
    np.power(a[a != 0][None], b)
    return a + 1


def inplace_int_power(a, b):
    a **= b
    return a


def int_power_of_element(a, b):
    return np.power(a, b[1]), b.argmin()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [unused_int_power, inplace_int_power, int_power_of_element])
def test_negative_integer_exponent_raises_on_each_call(f, backend):
    base, pos, neg = np.array([1, 2, 3]), np.array([1, 2, 3]), np.array([1, -2, 3])
    check(f, (base, pos), (base, neg), (base, pos), (base.astype(np.uint8), neg), backend=backend)


def write_then_raise(a0, a1, s):
    a1[...] = 4294967296
    if int(a0.argmax()) == 0:  # argmax of an empty array raises
        return a1 + s
    return a1 - s


def write_with_scalar_then_raise(a, b, s):
    a[...] = s
    b.argmax()
    return a


def warn_then_raise(a, s):
    v = a.astype(np.float64)           # ComplexWarning, once per call
    return np.positive(np.equal(a, v)) + s  # UFuncTypeError: positive of bools


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, args", [
    (warn_then_raise, (np.array(1 + 0j, np.complex64), 0.5)),
    (write_then_raise, (np.zeros(0, np.complex64)[::-1], np.array(-2.5 + 3.5j, np.complex64), float("inf"))),
    (write_then_raise, (np.zeros(0), np.array(1.0), 2.0)),
    (write_with_scalar_then_raise, (np.ones(3), np.zeros(0), 0.5)),
])
def test_writes_before_an_exception_with_runtime_scalars(f, args, backend):
    # The writes recorded before the exception ran in NumPy: with a Python float argument
    # (a runtime scalar) they run too, on every call.
    check(f, args, args, backend=backend)


def empty_int_power(v, a):
    return np.power(v[..., :0].astype(np.uint16), a), np.power(a[:0], a[:0] - 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_negative_integer_exponent_of_an_empty_power_does_not_raise(backend):
    # NumPy's loop does not run for an empty result: no check of the exponents.
    a = np.array([[-5], [-1], [0]], np.int8)
    check(empty_int_power, (a, a), (a, a), backend=backend)
    got = npc.power(npc.asarray(np.zeros((3, 0), np.uint16)), npc.asarray(a))
    assert got.shape == (3, 0) and got.dtype == np.power(np.zeros((3, 0), np.uint16), a).dtype


def test_no_loop_error_with_a_python_scalar_in_a_fresh_process():
    # The error names NumPy's abstract DType of the Python int; learnt at import, not inside
    # the trace (where numpy.gcd is npc's patched function).
    import subprocess
    import sys
    code = ("import numpy as np, npc\n"
            "try:\n"
            "    npc.compile(lambda a: np.gcd(a, 1))(np.ones(3, np.float32))\n"
            "except np._core._exceptions._UFuncNoLoopError as e:\n"
            "    print(str(e))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    try:
        np.gcd(np.ones(3, np.float32), 1)
    except np._core._exceptions._UFuncNoLoopError as e:
        want = str(e)
    assert out.stdout.strip() == want, out.stdout + out.stderr

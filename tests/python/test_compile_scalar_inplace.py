"""In-place operators of scalar results (`x = a[1]; x /= 2`, `s = a.sum(); s += 1`) act as
NumPy scalars' do: a NumPy scalar has no in-place operators, so Python computes `x / 2` with
NumPy's scalar arithmetic and rebinds the name, and another name for the old scalar keeps its
value (Note [in-place operators of scalar results] in python/npc/csrc/bind_ops.cpp). Each
operator NumPy scalars have, over dtypes and kinds of right operand, against NumPy running
the same function: value and type, warnings, and the errors NumPy raises (Note [operators
NumPy scalars lack]); both backends, the tracing call and a replay."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-scalar-inplace")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


OPERATORS = ["+=", "-=", "*=", "/=", "//=", "%=", "**=", "<<=", ">>=", "&=", "|=", "^="]

# Right operands: Python numbers (weak), NumPy scalars, a scalar result of another array,
# an array, and zero (NumPy's scalar warnings: "divide by zero encountered in scalar divide").
RIGHT = ["2", "2.5", "1j", "True", "np.int32(3)", "np.float32(2)", "b[0]", "b", "0"]

DTYPES = [np.bool_, np.int64, np.uint8, np.float64, np.float32, np.complex128]


def _program(op, right):
    # `t` keeps the scalar that `x` named before the statement.
    src = f"def f(a, b):\n    x = a[1]\n    t = x\n    x {op} {right}\n    return x, t\n"
    ns = {"np": np}
    exec(src, ns)  # noqa: S102  (a test program per operator and operand)
    return ns["f"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", OPERATORS)
def test_inplace_operator_of_an_element_equals_numpy(op, dtype, backend):
    a = (np.arange(5) * 3 + 1).astype(dtype)
    b = (np.arange(3) + 2).astype(dtype)
    for right in RIGHT:
        check(_program(op, right), (a, b), (a, b), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["+=", "/=", "//=", "%=", "**="])
def test_inplace_operator_with_another_dtype_equals_numpy(op, backend):
    # the scalar result's type and a NumPy scalar's decide the result type (NEP 50)
    for adt, bdt in [(np.int8, np.float32), (np.float32, np.int64), (np.uint8, np.int8), (np.float16, np.float64)]:
        a = (np.arange(5) * 3 + 1).astype(adt)
        b = (np.arange(3) + 2).astype(bdt)
        for right in ["b[0]", "b.sum()", "2", "2.5"]:
            check(_program(op, right), (a, b), (a, b), backend=backend)


def int_divided(a):
    x = a[1]
    x /= 2  # a NumPy int scalar divided: float64 0.5, where an int array's /= is a casting error
    return x


def aliases(a, v):
    s = a.sum()
    t = s
    s += 1  # t keeps its value: scalars are immutable
    d = np.dot(v, v)
    e = d
    d *= 2
    m = v @ v
    n = m
    m -= 1
    x = a.max()
    y = x
    x **= 2
    return s, t, d, e, m, n, x, y


def accumulate(a):
    s = a[0]
    first = s
    for i in range(1, a.shape[0]):
        s += a[i]  # NumPy's scalar add: overflow warns "in scalar add" for int8
    return s, first


def after_a_break(a):
    x = a[1]
    t = x
    x.item()  # a graph break realizes x, which still stands for a NumPy scalar
    x /= 2
    return x, t


def copied_element(a):
    x = a[2].copy()  # a NumPy scalar's copy is a scalar
    t = x
    x -= 1
    return x, t


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint16, np.float32, np.float64, np.complex64])
def test_inplace_operators_rebind_as_numpy_scalars(dtype, backend):
    a = (np.arange(6) * 40 + 1).astype(dtype)  # int8: the sums overflow
    v = (np.arange(4) + 1).astype(dtype)
    for f, args in [(int_divided, (a,)), (aliases, (a, v)), (accumulate, (a,)), (after_a_break, (a,)),
                    (copied_element, (a,))]:
        check(f, args, args, backend=backend)


def overflow(a):
    x = a[0]
    x += 1  # NumPy's scalar integer overflow warning
    y = a[1]
    y *= 3
    z = a[2]
    z //= 0  # "divide by zero encountered in scalar floor_divide"
    return x, y, z


def negative_power(a):
    w = a[2]
    w **= -1  # NumPy's ValueError (int64), or out of bounds for the unsigned type (NEP 50)
    return w


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8])
def test_inplace_operators_warn_and_raise_as_numpy_scalars(dtype, backend):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.max // 2, 3], dtype)
    check(overflow, (a,), (a,), backend=backend)
    check(negative_power, (a,), (a,), backend=backend)


def complex_floor_divided(a):
    x = a[1]
    x //= 2  # NumPy: TypeError "unsupported operand type(s) for //=: 'numpy.complex64' and 'int'"
    return x


def complex_remainder_of_element(a):
    x = a[1]
    x %= a[0]
    return x


def python_int_floor_divided_by_complex(a):
    x = 2
    x //= a[1]  # x is a Python int: Python names the statement's operator, //=
    return x


def numpy_scalar_remainder_by_complex(a):
    x = np.float32(2)
    x %= a[1]
    return x


def complex_floor_divided_out_of_place(a):
    return a[1] // 2.5


def complex_divmod(a):
    return divmod(a[1], 1j)


def complex_floor_divided_by_bool_scalar(a):
    x = a[1]
    x //= np.True_  # a NumPy bool scalar runs the ufunc: its TypeError names floor_divide
    return x


def bool_subtracted(a):
    x = a[1]
    x -= True  # NumPy's TypeError for boolean subtract
    return x


def float_shifted(a):
    x = a[1]
    x <<= 1  # no left_shift loop for floats: the ufunc's TypeError
    return x


ERRORS = [complex_floor_divided, complex_remainder_of_element, python_int_floor_divided_by_complex,
          numpy_scalar_remainder_by_complex, complex_floor_divided_out_of_place, complex_divmod,
          complex_floor_divided_by_bool_scalar]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", ERRORS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_operators_complex_scalars_lack_raise_numpy_errors(f, dtype, backend):
    a = np.array([1 + 2j, 3 - 1j, 2j], dtype)
    check(f, (a,), (a,), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, dtype", [(bool_subtracted, np.bool_), (float_shifted, np.float64),
                                      (float_shifted, np.float32)], ids=lambda v: getattr(v, "__name__", None))
def test_inplace_operator_errors_equal_numpy(f, dtype, backend):
    a = np.array([1, 0, 1], dtype)
    check(f, (a,), (a,), backend=backend)


def zero_d_arrays(a):
    a = a.copy()
    v = a[1, ...]  # a 0-d view, not a scalar: its in-place operator writes into a
    w = v
    v += 1
    z = np.zeros(())
    y = z
    z *= 3
    z += a[0]
    c = np.array(a[2])  # a 0-d array of an element
    d = c
    c -= 1
    return a, v, w, z, y, c, d


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_inplace_operators_of_0d_arrays_write_in_place(dtype, backend):
    a = np.arange(5).astype(dtype)
    check(zero_d_arrays, (a,), (a,), backend=backend)


def test_eager_inplace_operators_keep_array_rules_after_a_compile():
    # The scalar-result check is in the C++ in-place slots: a compile leaves ndarray's type as
    # it was, so eager in-place division keeps the fast path's divide-by-zero warning.
    npc.compile(int_divided)(np.arange(5))
    x = npc.zeros(4)
    with pytest.warns(RuntimeWarning, match="invalid value encountered in divide"):
        x /= 0.0
    z = npc.asarray(np.float64(1.0)).reshape(())  # an eager 0-d array is no scalar result
    t = z
    z += 1
    assert t is z and float(t) == 2.0
    i = npc.arange(3)
    with pytest.raises(TypeError) as got:
        i /= 2
    with pytest.raises(TypeError) as want:
        n = np.arange(3)
        n /= 2
    assert str(got.value) == str(want.value)


def _times_sequences(a):
    x = a[1]
    l = [0]
    l *= x  # the list's own in-place repeat by the scalar's __index__
    y = a[1]
    y *= [3]  # rebinds y to a list (Note [sequences times scalar results])
    return l, [0] * x, (1, 2) * a.argmax(), x * "ab", b"a" * x, bytearray(b"c") * x, y


def _float_times_list(a):
    return [0] * a[1]


def _float_times_list_inplace(a):
    x = a[1]
    x *= (1, 2)
    return x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", [np.int64, np.uint8, np.int16, np.float64, np.float32, np.complex64, np.bool_])
def test_sequences_times_scalar_results(dt, backend):
    """A NumPy integer scalar times a list, tuple, str or bytes repeats the sequence (NumPy's
    multiply defers to the sequence); other scalars raise Python's "can't multiply sequence
    by non-int of type 'numpy.float64'". Scalar results while tracing did the array
    broadcast instead ([0] * a[1] was array([0]) where NumPy gives [0, 0])."""
    a = np.array([0, 2, 1]).astype(dt)
    fns = (_times_sequences,) if np.issubdtype(dt, np.integer) else (_float_times_list, _float_times_list_inplace)
    for fn in fns:
        try:
            want = fn(a.copy())
        except TypeError as e:
            want = (TypeError, str(e))
        cf = npc.compile(fn, backend=backend)
        for _ in range(2):  # the tracing call, then a replay
            try:
                got = cf(a.copy())
            except TypeError as e:
                got = (TypeError, str(e))
            assert type(got) is type(want) and got == want
            if isinstance(want, tuple) and want and want[0] is not TypeError:
                assert [type(g) for g in got] == [type(w) for w in want]

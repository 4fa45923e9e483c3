"""ufunc.reduce / ufunc.accumulate loop resolution against NumPy: the loop comes from the
type tuple NumPy builds for a reduction, (dtype, input, dtype) with dtype= and (out, input,
out) with out=, and a signature without a loop raises NumPy's TypeError. Every reducible
ufunc x input dtype x dtype=/out= dtype of each kind: result dtype and values, or the
exception type and message."""
import warnings

import numpy as np
import pytest

import npc

UFUNCS = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax", "fmin", "logical_and",
          "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"]
# One dtype of each kind and width class (bool, signed, unsigned, float, complex, narrow
# and wide), as input and as dtype=/out=.
DTYPES = ["bool", "int8", "uint8", "int64", "uint64", "float16", "float32", "float64", "complex64", "complex128"]
# The other binary ufuncs (comparisons: only bool input has a loop whose first input is its
# output), over fewer dtypes. Not yet NumPy's: gcd/lcm messages for bool and inexact
# signatures, ldexp's mixed loop, arctan2 with a wider dtype= (see the module's report).
COMPARISONS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
OTHER = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "power", "float_power",
         "floor_divide", "remainder", "fmod", "hypot", "logaddexp", "logaddexp2", "copysign", "nextafter",
         "heaviside", "left_shift", "right_shift"]
FEW = ["bool", "int8", "uint64", "float16", "float64", "complex128"]


def _outcome(lib, fn):
    """(kind, payload) of fn(lib): the result's dtype, shape and bytes, or the exception's
    type and message. Warnings (casts of complex values) are not compared here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                r = np.asarray(fn(lib))
                return ("ok", r.dtype.str, r.shape, np.ascontiguousarray(r).tobytes())
            except Exception as e:  # noqa: BLE001 - compared with NumPy's
                return ("exc", type(e).__name__, str(e))


def _input(lib, dt):
    # Values that survive every cast here (1..6), along a non-contiguous view.
    x = np.arange(1, 13).reshape(2, 6)[:, ::2].astype(dt)
    return lib.asarray(x)


@pytest.mark.parametrize("kw", DTYPES)
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", UFUNCS)
@pytest.mark.parametrize("method", ["reduce", "accumulate"])
def test_dtype_keyword(method, name, dt, kw):
    def f(lib):
        return getattr(getattr(lib, name), method)(_input(lib, dt), axis=0, dtype=np.dtype(kw))
    assert _outcome(npc, f) == _outcome(np, f)


@pytest.mark.parametrize("kw", DTYPES)
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", UFUNCS)
@pytest.mark.parametrize("method", ["reduce", "accumulate"])
def test_out_keyword(method, name, dt, kw):
    def f(lib):
        o = lib.zeros((3,) if method == "reduce" else (2, 3), dtype=kw)
        r = getattr(getattr(lib, name), method)(_input(lib, dt), axis=0, out=o)
        assert r is o
        return o
    assert _outcome(npc, f) == _outcome(np, f)


@pytest.mark.parametrize("mode,kw", [("none", None)] + [(m, k) for m in ("dtype", "out") for k in FEW])
@pytest.mark.parametrize("dt", FEW)
@pytest.mark.parametrize("name", OTHER)
@pytest.mark.parametrize("method", ["reduce", "accumulate"])
def test_other_binary_ufuncs(method, name, dt, mode, kw):
    def f(lib):
        u = getattr(getattr(lib, name), method)
        if mode == "dtype":
            return u(_input(lib, dt), axis=0, dtype=np.dtype(kw))
        if mode == "none":
            return u(_input(lib, dt), axis=0)
        o = lib.zeros((3,) if method == "reduce" else (2, 3), dtype=kw)
        u(_input(lib, dt), axis=0, out=o)
        return o
    got, want = _outcome(npc, f), _outcome(np, f)
    if name in COMPARISONS and want[0] == "exc" and mode != "dtype":
        # NumPy's text here depends on its dispatch cache: the first comparison reduction of
        # a dtype decides which error later ones raise, with or without out=. npc gives what
        # a fresh NumPy process does for each form; both are TypeErrors.
        no_match = ("exc", "TypeError", f"No loop matching the specified signature and casting was found "
                                        f"for ufunc {name}")
        no_loop = ("exc", "UFuncTypeError", f"ufunc '{name}' did not contain a loop with signature matching "
                                            f"types (<class 'numpy.dtypes.BoolDType'>, "
                                            f"{type(np.dtype(dt))}) -> None")
        assert got == (no_loop if mode == "out" else no_match)
        assert want in (no_match, no_loop)
        return
    assert got == want


@pytest.mark.parametrize("kw", ["int8", "float32", "float64", "complex128"])
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum", "bitwise_or"])
def test_dtype_and_out_keywords(name, kw):
    # dtype= fixes the loop; out= only receives its result.
    def f(lib):
        o = lib.zeros(3, dtype=kw)
        getattr(lib, name).reduce(_input(lib, "int16"), axis=0, dtype=np.int64, out=o)
        return o
    assert _outcome(npc, f) == _outcome(np, f)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("axis", [(0, 0), (0, -2), (1, 1, 0)])
@pytest.mark.parametrize("name", ["add", "subtract", "divide", "maximum", "logical_xor"])
def test_duplicate_axis_first(name, axis, dt):
    # NumPy rejects a duplicate axis before it resolves the loop or checks reorderability.
    assert _outcome(npc, lambda l: getattr(l, name).reduce(_input(l, dt), axis=axis)) == \
        _outcome(np, lambda l: getattr(l, name).reduce(_input(l, dt), axis=axis))


@pytest.mark.parametrize("axis", [None, (0, 1), 0, ()])
@pytest.mark.parametrize("name", ["subtract", "divide"])
def test_bool_loop_error_before_reorderable(name, axis):
    # The loop (bool subtract has none) is resolved before the multi-axis check.
    x = np.ones((2, 3), dtype=bool)
    assert _outcome(npc, lambda l: getattr(l, name).reduce(l.asarray(x), axis=axis)) == \
        _outcome(np, lambda l: getattr(l, name).reduce(l.asarray(x), axis=axis))


def _with_warnings(lib, fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = _outcome(lib, fn)
    return res, sorted({(x.category.__name__, str(x.message)) for x in w})


@pytest.mark.parametrize("kw", ["int8", "float16", "complex64"])
@pytest.mark.parametrize("name", ["bitwise_and", "divide", "maximum", "logical_and", "add"])
@pytest.mark.parametrize("method", ["reduce", "accumulate"])
@pytest.mark.parametrize("mode", ["dtype", "out"])
def test_complex_input_warnings(mode, method, name, kw):
    # NumPy resolves the loop before it casts: a signature without a loop raises without a
    # ComplexWarning; logical loops cast complex to bool without one.
    def f(lib):
        u = getattr(getattr(lib, name), method)
        if mode == "dtype":
            return u(_input(lib, "complex64"), axis=0, dtype=np.dtype(kw))
        o = lib.zeros((3,) if method == "reduce" else (2, 3), dtype=kw)
        u(_input(lib, "complex64"), axis=0, out=o)
        return o
    assert _with_warnings(npc, f) == _with_warnings(np, f)

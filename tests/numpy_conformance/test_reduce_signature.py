"""ufunc.reduce / ufunc.accumulate loop resolution against NumPy (Note [reduce loop signature]
in src/ops/reduce_resolve.cpp): NumPy resolves the loop from the operand DTypes (out or None, input,
None), with dtype= fixing the first and the output, then runs the ufunc's legacy type resolver
on (out or input, input); a loop that is not reduce-compatible is retried with its output as
first DType, and accumulate needs a uniform loop. Every binary ufunc x input dtype x
dtype=/out= dtype of each kind: result dtype and values (bits; ULP bounds of
ulp_tolerances.csv for transcendental loops), or the exception type and message, and the
warnings."""
import warnings

import numpy as np
import pytest

import npc

from _diff import assert_same_outcome
from _ufunc_helpers import binary, compare_values, kinds, reorderable, representatives, ufuncs, ulp_bound

# Every binary ufunc of ops.def. Those NumPy reduces over several axes (an identity or
# ReorderableNone) and those with a type resolver of their own (uniform, true division) over
# every dtype= and out= of DTYPES; the others over fewer dtypes.
UFUNCS = ufuncs(binary, lambda r: reorderable(r) or r.resolver in ("Uniform", "TrueDivide", "Logical"))
# One dtype of each kind and width class (bool, signed, unsigned, float, complex, narrow
# and wide), as input and as dtype=/out=.
DTYPES = ["bool", "int8", "uint8", "int64", "uint64", "float16", "float32", "float64", "complex64", "complex128"]
# The other binary ufuncs of ops.def (comparisons: only bool input has a loop whose first
# input is its output; ldexp: its mixed loops "ei->e", "di->d"), over fewer dtypes.
COMPARISONS = ufuncs(lambda r: r.resolver == "Comparison")
OTHER = [n for n in ufuncs(binary) if n not in UFUNCS]
# One binary ufunc per arity, type resolver and floating-point error class.
REPRESENTATIVES = representatives(binary)
# The same but comparisons: NumPy's text for their missing loops depends on its dispatch
# cache (see _check_other); test_other_binary_ufuncs covers them.
NON_COMPARISON_REPRESENTATIVES = representatives(binary, lambda r: r.resolver != "Comparison")
FEW = ["bool", "int8", "int32", "uint64", "float16", "float32", "float64", "complex128"]
MODES = [("none", None)] + [(m, k) for m in ("dtype", "out") for k in FEW]


def _run(lib, fn, fp):
    with np.errstate(all=fp):
        try:
            r = np.asarray(fn(lib))
            return ("ok", r.dtype.str, r.shape, np.ascontiguousarray(r).tobytes())
        except Exception as e:  # noqa: BLE001 - compared with NumPy's
            return ("exc", type(e).__name__, str(e))


def _outcome(lib, fn):
    """(kind, payload) of fn(lib): the result's dtype, shape and bytes, or the exception's
    type and message, without its warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _run(lib, fn, "ignore")


def _with_warnings(lib, fn, fp="ignore"):
    """_outcome and the set of warnings (category, message) fn(lib) gave, under the
    floating-point error state `fp`."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = _run(lib, fn, fp)
    return res, sorted({(x.category.__name__, str(x.message)) for x in w})


def _input(lib, dt):
    # Values that survive every cast here (1..6), along a non-contiguous view.
    x = np.arange(1, 13).reshape(2, 6)[:, ::2].astype(dt)
    return lib.asarray(x)


def _assert_same(name, got, want):
    """got == want for (_with_warnings) outcomes; results of a transcendental loop within
    its ULP bound of ulp_tolerances.csv (NumPy's float32 arctan2 is its SVML vector loop)."""
    (g, gw), (w, ww) = got, want
    if g[0] == w[0] == "ok" and g[1:3] == w[1:3] and g[3] != w[3]:
        dt = np.dtype(w[1])
        if ulp_bound(name, dt):
            compare_values(np.frombuffer(g[3], dt), np.frombuffer(w[3], dt), ulp_bound(name, dt), name)
            assert_same_outcome(gw, ww)
            return
    assert_same_outcome(got, want)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", UFUNCS)
@pytest.mark.parametrize("method", ["reduce", "accumulate"])
def test_dtype_keyword(method, name, dt):
    # Every dtype= of DTYPES for one input dtype (one test each would spend most of the
    # module's time in pytest itself).
    for kw in DTYPES:
        def f(lib):
            return getattr(getattr(lib, name), method)(_input(lib, dt), axis=0, dtype=np.dtype(kw))
        assert_same_outcome((kw, _with_warnings(npc, f, "warn")), (kw, _with_warnings(np, f, "warn")))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", UFUNCS)
@pytest.mark.parametrize("method", ["reduce", "accumulate"])
def test_out_keyword(method, name, dt):
    for kw in DTYPES:
        def f(lib):
            o = lib.zeros((3,) if method == "reduce" else (2, 3), dtype=kw)
            r = getattr(getattr(lib, name), method)(_input(lib, dt), axis=0, out=o)
            assert r is o
            return o
        assert_same_outcome((kw, _with_warnings(npc, f, "warn")), (kw, _with_warnings(np, f, "warn")))


def _other(method, name, dt, mode, kw):
    def f(lib):
        u = getattr(getattr(lib, name), method)
        if mode == "dtype":
            return u(_input(lib, dt), axis=0, dtype=np.dtype(kw))
        if mode == "none":
            return u(_input(lib, dt), axis=0)
        o = lib.zeros((3,) if method == "reduce" else (2, 3), dtype=kw)
        u(_input(lib, dt), axis=0, out=o)
        return o
    return f


def _check_other(method, name, dt, mode, kw, f=None):
    f = f or _other(method, name, dt, mode, kw)
    got, want = _with_warnings(npc, f, "warn"), _with_warnings(np, f, "warn")
    if name in COMPARISONS and want[0][0] == "exc" and mode != "dtype":
        # NumPy's text here depends on its dispatch cache: the first comparison reduction of
        # a dtype decides which error later ones raise, with or without out=. npc gives what
        # a fresh NumPy process does for each form; both are TypeErrors.
        no_match = ("exc", "TypeError", f"No loop matching the specified signature and casting was found "
                                        f"for ufunc {name}")
        no_loop = ("exc", "UFuncTypeError", f"ufunc '{name}' did not contain a loop with signature matching "
                                            f"types (<class 'numpy.dtypes.BoolDType'>, "
                                            f"{type(np.dtype(dt))}) -> None")
        assert_same_outcome(got, (no_loop if mode == "out" else no_match, []))
        assert want[0] in (no_match, no_loop)
        return
    _assert_same(name, got, want)


@pytest.mark.parametrize("dt", FEW)
@pytest.mark.parametrize("name", OTHER)
@pytest.mark.parametrize("method", ["reduce", "accumulate"])
def test_other_binary_ufuncs(method, name, dt):
    # No keyword, then every dtype= and out= of FEW, for one input dtype.
    for mode, kw in MODES:
        try:
            _check_other(method, name, dt, mode, kw)
        except AssertionError as e:
            raise AssertionError(f"{mode}={kw}: {e}") from None


# NumPy's float32/float64 power and arctan2 loops (loops_umath_fp.dispatch.c.src, SVML) and
# ldexp's "fi->f"/"di->d" (loops_exponent_log.dispatch.c.src) take their AVX512 vector path
# when called as a reduction over more than one element: their overlap check passes for the
# accumulator (stride 0, read and written in place), so each element is combined with the
# start value and the last one wins: np.power.reduce([2., 3., 2.]) is 4.0 on AVX512 CPUs
# (64.0 elsewhere, and in npc, which reduces in order). The tests expect that difference
# only where this NumPy shows it: its reduce of one row is not the fold of its own ufunc.


def _numpy_reduce_is_not_a_fold(name, dt):
    u, x = getattr(np, name), np.array([2, 3, 2]).astype(dt)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            r = u.reduce(x)
        except TypeError:
            return False
        acc = x[:1].astype(r.dtype)
        for i in (1, 2):
            acc = u(acc, x[i:i + 1]).astype(r.dtype)
    return r.tobytes() != acc.tobytes()


def _inner_known_difference(method, name, dt):
    return method == "reduce" and _numpy_reduce_is_not_a_fold(name, dt)


_VECTOR_REDUCE_REASON = ("NumPy's AVX512 power/arctan2/ldexp loop, called as a reduction, combines each element "
                         "with the start value (np.power.reduce([2., 3., 2.]) == 4.0); npc reduces in order")


@pytest.mark.parametrize("dt", FEW)
@pytest.mark.parametrize("name", UFUNCS + OTHER)
@pytest.mark.parametrize("method", ["reduce", "accumulate"])
def test_inner_axis(request, method, name, dt):
    # The reduced axis is the inner one: one loop call reduces a row (NumPy's float16
    # subtract/divide then keep the accumulator in float, as add and multiply do).
    if _inner_known_difference(method, name, dt):
        request.applymarker(pytest.mark.xfail(strict=True, reason=_VECTOR_REDUCE_REASON))
    x = np.arange(1, 13).reshape(2, 6)[:, ::2] % 4 + 1
    for keepdims in (False, True):
        def f(lib):
            u = getattr(getattr(lib, name), method)
            a = lib.asarray(x.astype(dt))
            return u(a, axis=1, keepdims=keepdims) if method == "reduce" else u(a, axis=1)
        _check_other(method, name, dt, "none", None, f)


@pytest.mark.parametrize("name", [n for n in OTHER if n not in COMPARISONS])
@pytest.mark.parametrize("dt", ["bool", "int8", "int32", "float32", "float64"])
def test_other_reduce_keywords(name, dt):
    # initial=, where=, keepdims, axis=None/()/(0, 1), empty and 0-d inputs: ldexp's mixed
    # loop takes them all like the uniform loops.
    x = np.arange(1, 13).reshape(2, 6)[:, ::2] % 4 + 1
    w = np.array([[True, False, True], [False, True, True]])
    cases = [dict(axis=0, initial=3), dict(axis=0, initial=2, where=w), dict(axis=0, keepdims=True),
             dict(axis=None), dict(axis=(0, 1)), dict(axis=()), dict(axis=-1, initial=1)]
    for kw in cases:
        def f(lib):
            k = dict(kw, where=lib.asarray(kw["where"])) if "where" in kw else kw
            return getattr(lib, name).reduce(lib.asarray(x.astype(dt)), **k)
        if _inner_known_difference("reduce", name, dt) and kw.get("axis") in (None, (0, 1), -1):
            continue  # test_inner_axis's known difference
        try:
            _assert_same(name, _with_warnings(npc, f), _with_warnings(np, f))
        except AssertionError as e:
            raise AssertionError(f"{kw}: {e}") from None
    for shape, kw in [((0, 3), dict(axis=0)), ((0, 3), dict(axis=0, initial=1)), ((), dict(axis=None))]:
        def g(lib):
            return getattr(lib, name).reduce(lib.asarray(np.ones(shape, dt)), **kw)
        _assert_same(name, _with_warnings(npc, g), _with_warnings(np, g))


@pytest.mark.parametrize("dt", FEW)
@pytest.mark.parametrize("name", OTHER)
def test_other_outer_and_at(name, dt):
    # outer (with dtype=) and at follow the call's resolution: NumPy's uniform resolver's
    # no-loop error for gcd(x, y, dtype=float64), ldexp's "di->d" for an int32 exponent.
    x = np.arange(1, 13).reshape(2, 6)[:, ::2] % 4 + 1
    cases = [lambda lib: getattr(lib, name).outer(lib.asarray(x[0].astype(dt)), lib.asarray(x[1].astype(dt))),
             lambda lib: getattr(lib, name).outer(lib.asarray(x[0].astype(dt)), lib.asarray(x[1].astype(np.int32))),
             lambda lib: getattr(lib, name).outer(lib.asarray(x[0].astype(dt)), lib.asarray(x[1].astype(dt)),
                                                  dtype=np.float64),
             lambda lib: getattr(lib, name)(lib.asarray(x[0].astype(dt)), 3, dtype=np.float32)]
    for f in cases:
        _assert_same(name, _with_warnings(npc, f), _with_warnings(np, f))

    def at(lib):
        a = lib.asarray(np.arange(1, 6).astype(dt))
        getattr(lib, name).at(a, lib.asarray(np.array([0, 1, 1])), lib.asarray(np.array([1, 2, 3]).astype(dt)))
        return a
    _assert_same(name, _with_warnings(npc, at), _with_warnings(np, at))


@pytest.mark.parametrize("kw", ["int8", "float32", "float64", "complex128"])
@pytest.mark.parametrize("name", REPRESENTATIVES)
def test_dtype_and_out_keywords(name, kw):
    # dtype= fixes the loop; out= only receives its result.
    def f(lib):
        o = lib.zeros(3, dtype=kw)
        getattr(lib, name).reduce(_input(lib, "int16"), axis=0, dtype=np.int64, out=o)
        return o
    assert _outcome(npc, f) == _outcome(np, f)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("axis", [(0, 0), (0, -2), (1, 1, 0)])
@pytest.mark.parametrize("name", REPRESENTATIVES)
def test_duplicate_axis_first(name, axis, dt):
    # NumPy rejects a duplicate axis before it resolves the loop or checks reorderability.
    assert _outcome(npc, lambda l: getattr(l, name).reduce(_input(l, dt), axis=axis)) == \
        _outcome(np, lambda l: getattr(l, name).reduce(_input(l, dt), axis=axis))


@pytest.mark.parametrize("axis", [None, (0, 1), 0, ()])
@pytest.mark.parametrize("name", ufuncs(binary, lambda r: "b" not in kinds(r) and not reorderable(r)))
def test_bool_loop_error_before_reorderable(name, axis):
    # The loop (bool subtract has none) is resolved before the multi-axis check.
    x = np.ones((2, 3), dtype=bool)
    assert _outcome(npc, lambda l: getattr(l, name).reduce(l.asarray(x), axis=axis)) == \
        _outcome(np, lambda l: getattr(l, name).reduce(l.asarray(x), axis=axis))


@pytest.mark.parametrize("kw", ["int8", "float16", "complex64"])
@pytest.mark.parametrize("name", NON_COMPARISON_REPRESENTATIVES)
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


@pytest.mark.parametrize("name,values,dt,out", [
    ("add", [1e308, 1e308, 1.0], "f8", "f4"), ("add", [1e308, 1e308, 1.0], "f8", "f8"),
    ("add", [1e308, 1e308, 1.0], "f8", "i8"), ("add", [3e38, 3e38, 1.0], "f4", "f8"),
    ("multiply", [300, 300, 1.0], "e", "?"), ("multiply", [300, 300, 1.0], "e", "i1"),
    ("divide", [1.0, 0.0, 1.0], "f8", "f4"), ("divide", [1.0, 0.0, 1.0], "f8", "f8"),
    ("power", [9, 11, 1], "e", "u1"), ("ldexp", [1, 2000], "i4", "f4"), ("ldexp", [1, 2000], "i4", "f8")])
@pytest.mark.parametrize("method", ["reduce", "accumulate"])
def test_out_cast_warnings(method, name, values, dt, out):
    # An out= of another dtype than the loop's: NumPy accumulates into a copy in the loop
    # dtype and casts it back, which clears the flags its loop raised (no "divide by zero
    # encountered in accumulate" through a float32 out=); the cast's own are reported twice.
    def f(lib):
        o = lib.zeros(() if method == "reduce" else (3,), dtype=out)
        getattr(getattr(lib, name), method)(lib.asarray(np.array(values, dt)), out=o)
        return o
    assert_same_outcome(_with_warnings(npc, f, "warn"), _with_warnings(np, f, "warn"))


PAIRS = [("int8", "uint8"), ("int8", "uint16"), ("int16", "uint16"), ("bool", "int8"), ("uint8", "float16"),
         ("int32", "float16"), ("uint64", "int8"), ("float32", "complex64"), ("int16", "complex64")]


@pytest.mark.parametrize("name", UFUNCS + OTHER)
def test_outer_mixed_dtypes(name):
    # ufunc.outer resolves as the call: a ufunc without a type resolver of its own searches
    # its loops for the first that takes both arrays safely (np.hypot(int8, uint8) is
    # float16: Note [default type resolver] in registry.cpp), the others promote.
    for d1, d2 in PAIRS + [(b, a) for a, b in PAIRS]:
        def f(lib):
            return getattr(lib, name).outer(lib.asarray(np.array([1, 2, 3], d1)), lib.asarray(np.array([2, 1], d2)))
        try:
            _assert_same(name, _with_warnings(npc, f, "warn"), _with_warnings(np, f, "warn"))
        except AssertionError as e:
            raise AssertionError(f"{d1}, {d2}: {e}") from None


@pytest.mark.parametrize("name", UFUNCS + OTHER)
@pytest.mark.parametrize("dt", ["int8", "float32", "complex64"])
def test_at_complex_values(name, dt):
    # ufunc.at of complex values into a real array warns only where the loop drops an
    # imaginary part: not through a comparison's bool result or a logical loop's bool inputs.
    def f(lib):
        a = lib.asarray(np.arange(1, 6).astype(dt))
        getattr(lib, name).at(a, lib.asarray(np.array([0, 1, 1])), lib.asarray(np.array([1, 2 + 1j, 3])))
        return a
    _assert_same(name, _with_warnings(npc, f, "warn"), _with_warnings(np, f, "warn"))


@pytest.mark.parametrize("name", representatives(lambda r: r.resolver != "Comparison"))
@pytest.mark.parametrize("call", ["reduce", "accumulate", "outer", "at", "reduce0d", "acc0d", "acc_axis_none",
                                  "acc_axis_none_1d", "acc_axis_tuple", "acc_axis_empty", "acc_axis_twice"])
def test_reducelike_argument_errors(name, call):
    # NumPy's order: the ufunc's arity (binary, one output: "reduce only supported for
    # functions returning a single value", "outer product only supported for binary
    # functions", "Only single output ufuncs supported at this time"), then the axes
    # (accumulate takes axis=None or a tuple naming one axis).
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    calls = {
        "reduce": lambda u, lib: u.reduce(lib.asarray(x)),
        "accumulate": lambda u, lib: u.accumulate(lib.asarray(x)),
        "outer": lambda u, lib: u.outer(lib.asarray(x), lib.asarray(x)),
        "at": lambda u, lib: u.at(lib.asarray(x.copy()), [0]),
        "reduce0d": lambda u, lib: u.reduce(lib.asarray(np.float64(3)), axis=0),
        "acc0d": lambda u, lib: u.accumulate(lib.asarray(np.float64(3))),
        "acc_axis_none": lambda u, lib: u.accumulate(lib.asarray(x), axis=None),
        "acc_axis_none_1d": lambda u, lib: u.accumulate(lib.asarray(x[0]), axis=None),
        "acc_axis_tuple": lambda u, lib: u.accumulate(lib.asarray(x), axis=(1,)),
        "acc_axis_empty": lambda u, lib: u.accumulate(lib.asarray(x), axis=()),
        "acc_axis_twice": lambda u, lib: u.accumulate(lib.asarray(x), axis=(0, 0)),
    }
    def f(lib):
        return calls[call](getattr(lib, name), lib)
    assert_same_outcome(_outcome(npc, f), _outcome(np, f))

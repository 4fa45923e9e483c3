"""npc.compile probed as a NumPy user would: compiled results, exceptions and warnings equal eager NumPy.

Each test is a defect found by running small programs through ``npc.compile`` (default fused
backend) and plain NumPy; the ones not fixed yet are strict xfails naming the difference.
"""
import warnings

import numpy as np
import pytest

import npc
from npc import _core


def _compiled(fn):
    npc.compiler.reset()
    return npc.compile(fn)


@pytest.mark.parametrize("fn", [lambda x: np.cumsum(x, axis=1), lambda x: np.cumsum(x * 2) + 1,
                                lambda x: np.cumprod(x + 1, axis=0)])
def test_cumsum_cumprod_values(fn):
    a = np.arange(20.0).reshape(4, 5)
    got = _compiled(fn)(a)
    np.testing.assert_array_equal(got, fn(a))


def test_errstate_raise_inside_function():
    def f(x):
        with np.errstate(all="raise"):
            return np.log(x)

    x = np.array([0.0, -1.0, 2.0])
    with pytest.raises(FloatingPointError):
        f(x)
    cf = _compiled(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(FloatingPointError):
            cf(x)


def test_errstate_ignore_inside_function():
    def f(x):
        with np.errstate(divide="ignore"):
            y = np.log(x)
        return y + 1

    x = np.array([0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expect = f(x)
        got = _compiled(f)(x)
    np.testing.assert_array_equal(got, expect)


def test_concatenate_dynamic_width():
    f = lambda a, b: np.concatenate([a, b], axis=1)  # noqa: E731
    a = np.arange(20.0).reshape(4, 5)
    ai = np.arange(20, dtype=np.int32).reshape(4, 5)
    cf = _compiled(f)
    for x, y in [(a, a), (a, ai), (ai, ai[:, :2].copy())]:
        got = cf(x, y)
        expect = f(x, y)
        assert got.dtype == expect.dtype
        np.testing.assert_array_equal(got, expect)


def test_zero_d_after_symbolic_shapes():
    f = lambda x: x * 2 + 1  # noqa: E731
    a = np.arange(20.0).reshape(4, 5)
    cf = _compiled(f)
    for x in (a, a[:, :3].copy(), a.T.copy(), 3.0, np.array(2.0)):
        got = cf(x)
        expect = f(x)
        assert type(got) is type(expect)
        np.testing.assert_array_equal(got, expect)


def test_float16_overflow_warning():
    f = lambda x: x * np.float16(1000)  # noqa: E731
    x = np.array([100.0], np.float16)
    with pytest.warns(RuntimeWarning, match="overflow encountered in multiply"):
        expect = f(x)
    with pytest.warns(RuntimeWarning, match="overflow encountered in multiply"):
        got = _compiled(f)(x)
    np.testing.assert_array_equal(got, expect)


def test_ufunc_accumulate_values():
    f = lambda x: np.maximum.accumulate(x, axis=1) * 1  # noqa: E731
    a = np.arange(20.0).reshape(4, 5)[:, ::-1].copy()
    np.testing.assert_array_equal(_compiled(f)(a), f(a))


# Ops implemented by filling a fresh result through writes into its views (or into slices):
# the trace records the writes on separate inputs and returns the result array unwritten,
# so the compiled function returns zeros or uninitialized memory.
_FILLED = {
    "roll": lambda x: np.roll(x * 2, 1, axis=1),
    "pad": lambda x: np.pad(x * 2, 1) + 1,
    "gradient": lambda x: np.gradient(x)[0] * 1,
    "convolve": lambda x: np.convolve(x[0] * 2, x[1]) + 0,
    "cross": lambda x: np.cross(x[:, :3], x[:, 1:4]) + 1,
}


@pytest.mark.parametrize("name", sorted(_FILLED))
def test_ops_filling_a_fresh_result(name):
    f = _FILLED[name]
    a = np.arange(20.0).reshape(4, 5)
    got = _compiled(f)(a)
    expect = f(a)
    assert got.dtype == expect.dtype
    np.testing.assert_array_equal(got, expect)


def _reduce_outcome(fn, x):
    try:
        with np.errstate(all="ignore"):
            r = np.asarray(fn(x))
        return ("ok", r.dtype.str, r.shape, r.tobytes())
    except Exception as e:  # noqa: BLE001 - compared with eager npc's
        return ("exc", type(e).__name__, str(e))


# Binary ufuncs of the op table: one of each type resolver and floating-point error class,
# and those with loops of mixed input types (ldexp's "ei->e").
_BINARY = [r for r in _core.op_table() if r.kind == 0 and r.nin == 2 and r.nout == 1]
_REDUCE_CASES = []
for _r in _BINARY:
    if not any((r.resolver, r.fpe_check) == (_r.resolver, _r.fpe_check) for r in _BINARY if r.name in _REDUCE_CASES):
        _REDUCE_CASES.append(_r.name)
_REDUCE_CASES += [r.name for r in _BINARY if any(len(set(sig.split("->")[0])) > 1 for sig in r.loops.split())]


@pytest.mark.parametrize("backend", ["eager", "fused"])
@pytest.mark.parametrize("dt", ["bool", "int8", "int32", "uint64", "float16", "float64"])
@pytest.mark.parametrize("name", _REDUCE_CASES)
def test_traced_reduce_resolves_the_eager_loop(name, dt, backend):
    # A traced ufunc.reduce takes the loop eager npc (NumPy's resolution) takes: gcd.reduce(bool)
    # raises NumPy's no-loop error, hypot.reduce(int8) runs in float16, ldexp.reduce runs its
    # mixed "ei->e" loop. Compared with eager npc, whose loops test_reduce_signature.py sweeps
    # against NumPy (NumPy's own vector power/arctan2/ldexp reduce is not a fold on AVX512).
    x = (np.arange(1, 13).reshape(3, 4) % 4 + 1).astype(dt)
    for kw in ({}, {"axis": 1}, {"axis": 0, "keepdims": True}):
        def fn(a, kw=kw):
            return getattr(np, name).reduce(a, **kw)
        eager = _reduce_outcome(lambda a: getattr(npc, name).reduce(npc.asarray(a), **kw), x)
        npc.compiler.reset()
        compiled = _reduce_outcome(npc.compile(fn, backend=backend), x)
        assert compiled == eager, kw

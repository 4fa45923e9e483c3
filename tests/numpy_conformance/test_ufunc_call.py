"""ufunc call semantics against NumPy: operators (reflected, in-place, same_kind), keywords
(out=, where=, dtype=, casting=, order=), overlapping out, NEP 50 weak scalars, 0-d results
as NumPy scalars, floating-point error state, threads and fork."""
import multiprocessing
import threading
import warnings

import numpy as np
import pytest

import npc
from npc import _fallback

from _ufunc_helpers import assert_same, check_exceptions, run_both



OPS = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">="]


def _binop(op):
    return eval(f"lambda a, b: a {op} b")  # noqa: S307 - test-local operator table


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", ["int8", "uint16", "int64", "float32", "float64", "complex128", "bool"])
def test_operators_and_reflected(op, dt):
    a = (np.arange(1, 7) % 5 + 1).astype(dt).reshape(2, 3)
    b = (np.arange(6, 0, -1) % 4 + 1).astype(dt).reshape(2, 3)
    f = _binop(op)
    for x, y in ((a, b), (a, 2), (3, a), (a, 2.5), (1.5, a), (a, b[0]), (a[:, ::-1], b.T.T)):
        e, g, _, _ = run_both(f, f, [x, y], [npc.asarray(x) if isinstance(x, np.ndarray) else x,
                                              npc.asarray(y) if isinstance(y, np.ndarray) else y])
        with np.errstate(all="ignore"):
            if check_exceptions(e, g, f"{dt} {op}"):
                continue
        assert_same(g, e, op, 0, f"{dt} {x!r} {op} {y!r}")


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/=", "//=", "%=", "&=", "|=", "<<="])
@pytest.mark.parametrize("dt", ["int16", "float64", "bool"])
def test_inplace_same_kind(op, dt):
    for other in (np.ones(3, "int8"), np.ones(3, "float32") * 2, 2, 2.5):
        a = np.arange(3).astype(dt)
        b = npc.asarray(a.copy())
        ns_np, ns_npc = {"a": a, "o": other}, {"a": b, "o": npc.asarray(other) if isinstance(other, np.ndarray) else other}
        errs = []
        for ns in (ns_np, ns_npc):
            try:
                with np.errstate(all="ignore"):
                    exec(f"a {op} o", {}, ns)  # noqa: S102 - operator under test
                errs.append(None)
            except Exception as exc:  # noqa: BLE001
                errs.append(exc)
        if errs[0] is not None or errs[1] is not None:
            assert isinstance(errs[1], type(errs[0])), (op, dt, other, errs)
            if "Cannot cast" in str(errs[0]):
                assert str(errs[0]) == str(errs[1])
            continue
        assert_same(ns_npc["a"], ns_np["a"], op, 0, f"{dt} {op} {other!r}")
        assert ns_npc["a"] is b


def test_inplace_int_plus_float_raises_numpys_error():
    a = npc.arange(3)
    with pytest.raises(np._core._exceptions._UFuncOutputCastingError,
                       match=r"Cannot cast ufunc 'add' output from dtype\('float64'\) to dtype\('int64'\) "
                             r"with casting rule 'same_kind'"):
        a += 1.5


def test_keywords_out_where_dtype_casting_order():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    b = npc.asarray(a)
    out = npc.zeros((2, 3))
    r = npc.add(b, 1, out=out)
    assert r is out
    assert_same(out, a + 1, "add", 0, "out")
    out2 = npc.full((2, 3), -1.0)
    npc.multiply(b, 2, out=out2, where=npc.asarray(a > 2))
    exp = np.full((2, 3), -1.0)
    np.multiply(a, 2, out=exp, where=a > 2)
    assert_same(out2, exp, "multiply", 0, "where")
    assert_same(npc.add(b, b, dtype=np.float32), np.add(a, a, dtype=np.float32), "add", 0, "dtype")
    assert_same(npc.add(npc.arange(3), 1, dtype=np.float64), np.add(np.arange(3), 1, dtype=np.float64), "add", 0, "d")
    with pytest.raises(TypeError):
        npc.add(b, b, dtype=np.int64)
    with pytest.raises(np._core._exceptions._UFuncInputCastingError):
        npc.add(npc.arange(3, dtype=np.int8), npc.arange(3, dtype=np.int16), casting="no")
    f = npc.add(npc.asarray(np.asfortranarray(a)), 1.0)
    assert f.flags.f_contiguous
    c = npc.add(npc.asarray(np.asfortranarray(a)), 1.0, order="C")
    assert c.flags.c_contiguous
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        npc.add(b, 1, out=npc.zeros(3))
    o1, o2 = npc.zeros(3), npc.zeros(3)
    q, r = npc.divmod(npc.arange(3.0), 2, out=(o1, o2))
    assert q is o1 and r is o2
    assert_same(o2, np.arange(3.0) % 2, "divmod", 0, "divmod out")
    # positional out
    o3 = npc.zeros(3)
    assert npc.negative(npc.arange(3.0), o3) is o3


def test_overlapping_out_matches_numpy():
    a = np.arange(10.0)
    c = a.copy()
    np.add(a[:-1], a[1:], out=a[1:])
    npc.add(npc.asarray(c[:-1]), npc.asarray(c[1:]), out=npc.asarray(c[1:]))
    assert np.array_equal(c, a)
    a = np.arange(10.0)
    c = a.copy()
    np.negative(a[::-1], out=a)
    npc.negative(npc.asarray(c[::-1]), out=npc.asarray(c))
    assert np.array_equal(c, a)


def test_weak_python_scalars_nep50():
    u8 = npc.asarray(np.array([1, 2, 250], np.uint8))
    assert (u8 + 1).dtype == np.uint8
    assert (u8 + 1.0).dtype == np.float64
    assert (npc.asarray(np.ones(2, np.float32)) * 3.0).dtype == np.float32
    assert (npc.asarray(np.ones(2, np.float32)) * 3j).dtype == np.complex64
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        u8 + 300
    with pytest.raises(OverflowError):
        u8 - (-1)
    assert_same(u8 < 300, np.array([1, 2, 250], np.uint8) < 300, "less", 0, "cmp out of range")
    assert_same(u8 == -1, np.array([1, 2, 250], np.uint8) == -1, "equal", 0, "cmp negative")
    i64, u64 = np.array([-1, 5], np.int64), np.array([2**63, 5], np.uint64)
    assert_same(npc.asarray(i64) < npc.asarray(u64), i64 < u64, "less", 0, "int64 vs uint64")
    assert_same(npc.asarray(i64) == npc.asarray(u64), i64 == u64, "equal", 0, "int64 vs uint64")


def test_zero_d_results_are_numpy_scalars():
    r = npc.add(npc.asarray(np.array(2.0)), 1)
    assert type(r) is np.float64 and r == 3.0
    r = npc.sqrt(npc.asarray(np.float32(4)))
    assert type(r) is np.float32
    assert type(npc.sum(npc.arange(4))) is np.int64
    out = npc.zeros(())
    assert npc.add(1.0, 2.0, out=out) is out


def test_floating_point_error_state():
    z = npc.zeros(3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        npc.divide(npc.ones(3), z)
    assert [str(x.message) for x in w] == ["divide by zero encountered in divide"]
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
            npc.divide(npc.ones(3), z)
    with np.errstate(all="ignore"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            npc.log(z)
            npc.sqrt(npc.asarray(np.array([-1.0])))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        npc.floor_divide(npc.arange(3), 0)
    assert [str(x.message) for x in w] == ["divide by zero encountered in floor_divide"]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        npc.multiply(npc.asarray(np.array([1e300])), 1e300)
    assert [str(x.message) for x in w] == ["overflow encountered in multiply"]
    called = []
    with np.errstate(invalid="call"):
        old = np.seterrcall(lambda *a: called.append(a))
        try:
            npc.sqrt(npc.asarray(np.array([-1.0])))
        finally:
            np.seterrcall(old)
    assert called and called[0][0] == "invalid value"
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed."):
        npc.power(npc.arange(3), -1)


def test_errors_match_numpy():
    cases = [
        (lambda m: m.add(m.arange(3), m.arange(4)), ValueError),
        (lambda m: m.bitwise_and(m.ones(2), m.ones(2)), TypeError),
        (lambda m: m.subtract(m.asarray(np.array([True])), m.asarray(np.array([True]))), TypeError),
        (lambda m: -m.asarray(np.array([True])), TypeError),
        (lambda m: m.add(1), TypeError),
        (lambda m: m.sum(m.ones((2, 2)), axis=5), np.exceptions.AxisError),
        (lambda m: m.argmax(m.zeros(0)), ValueError),
        (lambda m: m.add.accumulate(m.ones(3), out=m.zeros(4)), ValueError),
    ]
    for fn, exc in cases:
        with pytest.raises(exc):
            fn(npc)
        with pytest.raises(exc):
            fn(np)


def test_ufunc_attributes_and_aliases():
    assert npc.add.nin == 2 and npc.add.nout == 1 and npc.add.identity == 0
    assert npc.divmod.nout == 2 and npc.frexp.nargs == 3
    assert npc.true_divide is npc.divide and npc.mod is npc.remainder and npc.abs is npc.absolute
    assert npc.conj is npc.conjugate and npc.bitwise_not is npc.invert
    assert npc.degrees.__name__ == "degrees" and npc.radians.__name__ == "radians"
    assert repr(npc.sin) == "<ufunc 'sin'>"


def test_composites():
    a = np.array([[1.0, np.nan, -np.inf], [np.inf, 2.5, -0.5]])
    b = npc.asarray(a)
    assert_same(npc.nan_to_num(b), np.nan_to_num(a), "nan_to_num", 0, "nan_to_num")
    assert_same(npc.clip(b, -1, 1), np.clip(a, -1, 1), "clip", 0, "clip")
    assert_same(npc.where(npc.isnan(b), 0.0, b), np.where(np.isnan(a), 0.0, a), "where", 0, "where")
    assert_same(npc.where(npc.asarray(a > 0), 1, 2), np.where(a > 0, 1, 2), "where", 0, "where ints")
    x = np.array([1.234567, -2.5, 0.5, 3.5, 1e-9])
    for d in (0, 1, 3, -1):
        assert_same(npc.round(npc.asarray(x), d), np.round(x, d), "round", 0, f"round {d}")
    assert_same(npc.fix(npc.asarray(x)), np.fix(x), "fix", 0, "fix")
    z = np.array([1 + 1j, -1 - 2j, 3.0])
    assert_same(npc.angle(npc.asarray(z)), np.angle(z), "angle", 0, "angle")
    assert_same(npc.angle(npc.asarray(z), deg=True), np.angle(z, deg=True), "angle", 0, "angle deg")
    assert_same(npc.real(npc.asarray(z)), np.real(z), "real", 0, "real")
    assert_same(npc.imag(npc.asarray(z)), np.imag(z), "imag", 0, "imag")
    p, q = np.array([1.0, 2.0, np.nan]), np.array([1.0 + 1e-9, 2.1, np.nan])
    assert_same(npc.isclose(npc.asarray(p), npc.asarray(q)), np.isclose(p, q), "isclose", 0, "isclose")
    assert_same(npc.isclose(npc.asarray(p), npc.asarray(q), equal_nan=True), np.isclose(p, q, equal_nan=True),
                "isclose", 0, "isclose nan")
    assert npc.allclose(npc.asarray(p[:1]), npc.asarray(q[:1])) == np.allclose(p[:1], q[:1])
    assert npc.array_equal(npc.asarray(p), npc.asarray(p)) is False
    assert npc.array_equal(npc.asarray(p), npc.asarray(p), equal_nan=True) is True
    assert npc.array_equiv(npc.asarray(np.ones((2, 3))), npc.asarray(np.ones(3))) is True
    assert npc.array_equiv(npc.asarray(np.ones((2, 3))), npc.asarray(np.ones(2))) is False


def test_threads_settings_and_concurrent_calls():
    old = npc.get_num_threads()
    assert old >= 1
    npc.set_num_threads(1)
    assert npc.get_num_threads() == 1
    npc.set_num_threads(old)
    thr = npc.get_parallel_threshold()
    npc.set_parallel_threshold(16)
    try:
        a = np.random.default_rng(0).standard_normal(200_001)
        b = npc.asarray(a)
        results = [None] * 4

        def work(i):
            results[i] = np.asarray(npc.add(npc.multiply(b, 2.0), 1.0))

        ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for r in results:
            assert np.array_equal(r, a * 2.0 + 1.0)
        assert npc.sum(b) == pytest.approx(np.sum(a), rel=1e-12)
    finally:
        npc.set_parallel_threshold(thr)


def _child(q):
    import numpy as np_
    import npc as npc_
    a = npc_.asarray(np_.arange(300_000, dtype=np_.float64))
    q.put(float(npc_.sum(npc_.add(a, 1.0))))


def test_no_hang_after_fork():
    a = npc.asarray(np.arange(300_000, dtype=np.float64))
    npc.add(a, 1.0)  # the parent's thread pool is running
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q,))
    p.start()
    p.join(60)
    assert p.exitcode == 0, "child process hung or failed after fork"
    assert q.get(timeout=5) == float(np.sum(np.arange(300_000) + 1.0))

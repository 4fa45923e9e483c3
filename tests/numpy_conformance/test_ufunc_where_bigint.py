"""ufunc where= lanes and Python ints beyond int64 against NumPy.

where=: the lanes where the mask is False are neither computed nor written, so their
floating-point errors are never reported (np.divide(1, x, where=x != 0, out=o) does not warn)
and out='s values there stay. Every ufunc of the op table, every dtype it has a loop for,
contiguous / strided / negative-stride / broadcast / 0-d operands, out= of the loop's dtype
and of another dtype.

Big Python ints (Note [big Python ints] in npc/_ufunc.py): comparisons answer exactly, float
and complex loops take float(int), integer arithmetic raises OverflowError, as NumPy 2.5.
npc's NumPy fallback is an error here."""
import operator
import warnings

import numpy as np
import pytest

import npc

from _ufunc_helpers import NATIVE, SHIFTS, UFUNC_ROWS, assert_same, binary, check_exceptions, loop_dtypes, \
    run_both, second_operand_dtype, ufuncs, ulp_bound



def special(dtype, n, seed):
    """Values that raise every FP error somewhere: 0, -1, +-inf, NaN, huge, tiny."""
    rng = np.random.default_rng(seed)
    k = dtype.kind
    if k == "b":
        return rng.integers(0, 2, n).astype(bool)
    if k in "iu":
        v = rng.integers(0 if k == "u" else -3, 4, n)
        return v.astype(dtype)
    real = dtype if k == "f" else np.dtype(f"f{dtype.itemsize // 2}")
    pool = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5, -7.0, np.finfo(real).max,
                     np.finfo(real).tiny, 1e-30, 700.0], dtype=np.float64)
    with np.errstate(all="ignore"):
        v = rng.choice(pool, n).astype(real)
        if k == "c":
            v = (v + 1j * rng.choice(pool, n).astype(real)).astype(dtype)
    return v


ROWS = [r for r in UFUNC_ROWS if r[3] == 1]
CASES = [(r[0], d) for r in ROWS for d in loop_dtypes(r)]


def layouts(x):
    yield "c", x, None
    yield "strided", x[::2], slice(None, None, 2)
    yield "negstride", x[::-1], slice(None, None, -1)


@pytest.mark.parametrize("name,dtype", CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_masked_lanes_not_computed(name, dtype):
    row = next(r for r in ROWS if r[0] == name)
    nin = row[2]
    n = 24
    ins = [special(dtype if i == 0 else second_operand_dtype(row, dtype), n, i) for i in range(nin)]
    if name in SHIFTS and dtype.kind in "iu":
        ins = [np.abs(v) % 8 if i == 1 else v for i, v in enumerate(ins)]
    if name == "power" and dtype.kind in "iu":
        ins[1] = np.abs(ins[1])
    rng = np.random.default_rng(5)
    mask = rng.integers(0, 2, n).astype(bool)
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(*ins)
    out_dt = ref.dtype
    for lname, _, sl in layouts(ins[0]):
        xs = [v if sl is None else v[sl] for v in ins]
        m = mask if sl is None else mask[sl]
        for odt in (out_dt, np.dtype(np.complex128) if out_dt.kind == "c" else np.dtype(np.float64)):
            if not np.can_cast(out_dt, odt, "same_kind"):
                continue
            fill = np.full(m.shape, 3, odt)
            for mk, mm in (("mask", m), ("scalar-false", False), ("broadcast", m[:1])):
                what = f"{name} {dtype} {lname} out={odt} where={mk}"
                o_np, o_npc = fill.copy(), npc.asarray(fill.copy())
                e, g, we, wg = run_both(lambda *a: getattr(np, name)(*a, out=o_np, where=mm),
                                        lambda *a: getattr(npc, name)(*a, out=o_npc,
                                                                      where=mm if mm is False else npc.asarray(mm)),
                                        xs, [npc.asarray(v) for v in xs])
                if check_exceptions(e, g, what):
                    continue
                assert wg == we, f"{what}: npc warned {wg}, NumPy {we}"
                # Compared in the loop's dtype, under the op's ULP bound (ulp_tolerances.csv).
                got, exp = np.asarray(o_npc).astype(out_dt), o_np.astype(out_dt)
                if name in ("fmax", "fmin") and out_dt.kind == "f":
                    # Which zero of a (0.0, -0.0) tie NumPy returns depends on its SIMD path
                    # (the strict xfail of test_ufunc.py): compare zeros without their sign.
                    got, exp = got + 0.0, exp + 0.0
                assert_same(npc.asarray(got), exp, name, ulp_bound(name, out_dt), what)


def test_divide_where_does_not_warn():
    x = np.array([0.0, 2.0, 0.0, 4.0])
    for lib, arr in ((np, x), (npc, npc.asarray(x))):
        out = lib.zeros(4)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lib.divide(1, arr, where=arr != 0, out=out)
        assert np.asarray(out).tolist() == [0.0, 0.5, 0.0, 0.25]
    # Without out=, the masked lanes are uninitialised in NumPy too; the computed ones match.
    r = npc.divide(1, npc.asarray(x), where=npc.asarray(x != 0))
    assert np.asarray(r)[[1, 3]].tolist() == [0.5, 0.25]


def test_where_0d_and_multi_output():
    for name in ufuncs(lambda r: r.nout == 2):
        uf_np, uf_npc = getattr(np, name), getattr(npc, name)
        x = np.array([0.0, 1.5, -2.0, np.inf])
        args = (x, np.array([0.0, 2.0, 0.0, 1.0])) if uf_np.nin == 2 else (x,)
        m = np.array([False, True, False, True])
        outs_np = tuple(np.full(4, 7, t) for t in uf_np(*args).__class__ is tuple and
                        [r.dtype for r in uf_np(*[np.ones(1)] * uf_np.nin)] or [])
        outs_npc = tuple(npc.asarray(o.copy()) for o in outs_np)
        e, g, we, wg = run_both(lambda *a: uf_np(*a, out=outs_np, where=m),
                                lambda *a: uf_npc(*a, out=outs_npc, where=npc.asarray(m)),
                                list(args), [npc.asarray(a) for a in args])
        assert wg == we, (name, wg, we)
        for a, b in zip(outs_npc, outs_np):
            assert_same(a, b, name, 0, name)
    o_np, o_npc = np.array(5.0), npc.asarray(np.array(5.0))
    np.sqrt(np.array(-1.0), out=o_np, where=np.array(False))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        npc.sqrt(npc.asarray(np.array(-1.0)), out=o_npc, where=npc.asarray(np.array(False)))
    assert float(o_npc) == float(o_np) == 5.0


# ---------------------------------------------------------------- big Python ints
BIG = [2**64, 2**70, -2**63 - 1, -2**70, 2**1100, -2**1100, 2**200]
BIG_OPS = ufuncs(binary)
# ndarray's binary operators (the forward names of the op table's dunders column) that the
# operator module has (divmod is a builtin).
OPERATORS = [getattr(operator, r.dunders[0]) for r in UFUNC_ROWS
             if binary(r) and r.dunders and hasattr(operator, r.dunders[0])]
ALL = [NATIVE[c] for c in "?bBhHiIlLefdFD"]


@pytest.mark.parametrize("name", BIG_OPS)
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_big_python_ints(name, dtype):
    x = np.array([0, 1, 3, 2], dtype=dtype) if dtype.kind != "b" else np.array([True, False, True, False])
    shapes = {"1d": x, "0d": x[1].reshape(()), "negstride": x[::-1], "2d": np.stack([x, x]).T}
    for v in BIG:
        for sname, a in shapes.items():
            for left in (False, True):
                args_np = [v, a] if left else [a, v]
                args_npc = [v, npc.asarray(a)] if left else [npc.asarray(a), v]
                what = f"{name} {dtype} {sname} {'left' if left else 'right'} {v}"
                e, g, we, wg = run_both(getattr(np, name), getattr(npc, name), args_np, args_npc)
                if check_exceptions(e, g, what):
                    continue
                assert wg == we, f"{what}: npc warned {wg}, NumPy {we}"
                assert_same(g, e, name, 0, what)


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_big_python_int_operators(dtype):
    x = np.arange(4).astype(dtype)
    for v in BIG:
        for fn in OPERATORS:
            for args_np, args_npc in (([x, v], [npc.asarray(x), v]), ([v, x], [v, npc.asarray(x)])):
                what = f"{fn.__name__} {dtype} {v} {'left' if args_np[0] is v else 'right'}"
                e, g, we, wg = run_both(fn, fn, args_np, args_npc)
                if check_exceptions(e, g, what):
                    continue
                assert wg == we, f"{what}: npc warned {wg}, NumPy {we}"
                assert_same(g, e, fn.__name__, 0, what)
        # in place: float arrays take float(v); integer arrays raise OverflowError
        a_np, a_npc = x.copy(), npc.asarray(x.copy())
        e, g, _, _ = run_both(operator.iadd, operator.iadd, [a_np, v], [a_npc, v])
        if not check_exceptions(e, g, f"+= {dtype} {v}"):
            assert_same(a_npc, a_np, "add", 0, f"+= {dtype} {v}")


def test_big_int_where_and_keywords():
    x = np.array([1.5, 2.0])
    for v in (2**70, -2**80):
        for c in (np.array([True, False]), np.array(True)):
            assert_same(npc.where(npc.asarray(c), npc.asarray(x), v), np.where(c, x, v), "where", 0, "where")
        assert_same(npc.add(npc.asarray(x), v, dtype=np.float32), np.add(x, v, dtype=np.float32), "add", 0, "dtype")
        o_np, o_npc = np.zeros(2), npc.zeros(2)
        np.multiply(x, v, out=o_np)
        npc.multiply(npc.asarray(x), v, out=o_npc)
        assert_same(o_npc, o_np, "multiply", 0, "out")
        o_np, o_npc = np.zeros(2, bool), npc.zeros(2, bool)
        np.less(np.arange(2), v, out=o_np)
        npc.less(npc.arange(2), v, out=o_npc)
        assert_same(o_npc, o_np, "less", 0, "comparison out=")
    with pytest.raises(OverflowError):
        npc.where(npc.asarray([True]), npc.asarray([1]), 2**70)

"""Reductions on the fast paths keep NumPy's bits (Note [NumPy reduction order] in
src/ops/reduce_plan.cpp): inputs cast piece by piece through NumPy's 8192-element buffer
(Note [cast pieces]: sum/prod/mean with a widening dtype, float16 means, small ints),
outer-axis reductions of reversed, strided and transposed views accumulated row by row
(Note [row-wise outer reductions]), chunked exact reductions (Note [chunked reductions]) and
the vector loops of src/ops/reduce_simd.cpp. Every case runs on one thread and on two
threads with the parallel threshold at 1, so the threaded paths see small arrays too. Values
are order-sensitive (magnitudes spread over six decades), so any change of association
shows. npc's NumPy fallback is an error here (conftest.py)."""
import itertools
import warnings

import numpy as np
import pytest

import npc

from _ufunc_helpers import UFUNC_ROWS, assert_same, binary, kinds, reorderable, ufuncs


@pytest.fixture(params=[1, 2], ids=["t1", "t2"])
def threads(request):
    old_n, old_thr = npc.get_num_threads(), npc.get_parallel_threshold()
    npc.set_num_threads(request.param)
    npc.set_parallel_threshold(1 if request.param > 1 else old_thr)
    yield request.param
    npc.set_num_threads(old_n)
    npc.set_parallel_threshold(old_thr)


VIEWS = {
    "c": lambda b: b,
    "rev-all": lambda b: b[::-1, ::-1, ::-1],
    "rev0-step2": lambda b: b[::-1, :, ::2],
    "rev2": lambda b: b[:, :, ::-1],
    "strided1": lambda b: b[:, ::2, :],
    "transposed": lambda b: b.transpose(2, 0, 1),
    "fortran": np.asfortranarray,
}
AXES = [None, 0, 1, 2, (0, 1), (0, 2), (1, 2)]


def _values(rng, shape, dtype, prod=False):
    v = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)
    if prod:
        v = 1 + v / 1e6
    if np.dtype(dtype).kind in "iub":
        return rng.integers(-100 if np.dtype(dtype).kind == "i" else 0, 100, shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (v + 1j * v[..., ::-1]).astype(dtype)
    return v.astype(dtype)


def _check(fn, a, what, **kw):
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        e = fn(np, a, **kw)
    with warnings.catch_warnings(record=True) as wg:
        warnings.simplefilter("always")
        g = fn(npc, npc.asarray(a), **kw)
    assert_same(g, e, "", 0, what)
    assert [str(w.message) for w in wg] == [str(w.message) for w in we], what


# (input dtype, dtype= of sum/prod/mean): the widening casts that go through NumPy's buffer.
CASTS = [("float16", "float32"), ("float16", "float64"), ("float32", "float64"), ("int8", "float64"),
         ("int32", "float32"), ("bool", "float64"), ("uint16", "int64"), ("int32", None), ("uint8", None),
         ("bool", None), ("complex64", "complex128"), ("int64", "int32")]


@pytest.mark.parametrize("src,dt", CASTS, ids=[f"{s}-{d}" for s, d in CASTS])
def test_cast_pieces_bits(threads, src, dt):
    rng = np.random.default_rng(3)
    for shape in ((30001,), (3, 5, 4000), (40, 9, 70)):
        base = _values(rng, shape, src)
        views = {"c": base} if len(shape) == 1 else {k: f(base) for k, f in VIEWS.items()}
        if len(shape) == 1:
            views["rev"], views["step3"] = base[::-1], base[::3]
        for vname, a in views.items():
            for axis in ([None, 0] if a.ndim == 1 else AXES):
                for name in ("sum", "mean", "prod"):
                    if name == "mean" and np.dtype(dt or src).kind in "iub":
                        continue
                    x = a
                    if name == "prod" and np.dtype(src).kind in "fc":
                        x = (1 + a / 1e3).astype(src)
                    kw = {} if dt is None else {"dtype": dt}
                    _check(lambda m, v, **k: getattr(m, name)(v, axis=axis, **k), x,
                           f"{name} {src}->{dt} {shape} {vname} axis={axis}", **kw)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_means_and_sums_by_default_dtype(threads, dtype):
    """mean of float16 accumulates in float32 (a cast through the buffer); plain sums."""
    rng = np.random.default_rng(5)
    a = _values(rng, (20, 30, 70), dtype)
    for vname, f in VIEWS.items():
        v = f(a)
        for axis in AXES:
            for name in ("sum", "mean"):
                _check(lambda m, x: getattr(m, name)(x, axis=axis), v, f"{name} {dtype} {vname} axis={axis}")


OUTER_DTYPES = ["float16", "float32", "float64", "complex64", "complex128", "int16", "uint32", "int64", "bool"]


@pytest.mark.parametrize("dtype", OUTER_DTYPES)
def test_outer_reductions_of_views(threads, dtype):
    """Reductions whose innermost iteration dim is kept: row by row, every op, every view."""
    rng = np.random.default_rng(7)
    a = _values(rng, (12, 10, 140), dtype)
    p = _values(rng, (12, 10, 140), dtype, prod=True)
    if np.dtype(dtype).kind == "f":
        a.flat[[5, 777, 9000]] = [np.nan, -0.0, 0.0]
        a[3, :, :4] = -0.0
    for vname, f in VIEWS.items():
        for axis in AXES:
            for name in ("sum", "prod", "max", "min", "mean"):
                if name == "mean" and dtype == "bool":
                    continue
                v = f(p if name == "prod" else a)
                _check(lambda m, x: getattr(m, name)(x, axis=axis), v, f"{name} {dtype} {vname} axis={axis}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32"])
def test_outer_reductions_where_and_initial(threads, dtype):
    rng = np.random.default_rng(9)
    a = _values(rng, (9, 11, 300), dtype)
    mask = rng.random((11, 300)) < 0.7
    for vname in ("c", "rev0-step2", "rev-all", "transposed"):
        v = VIEWS[vname](a)
        m = VIEWS[vname](np.broadcast_to(mask, a.shape))
        for axis in (0, 1, (0, 1), None):
            _check(lambda mod, x: mod.add.reduce(x, axis=axis, where=m, initial=1.5 if dtype != "int32" else 3), v,
                   f"add where {dtype} {vname} axis={axis}")
            _check(lambda mod, x: mod.multiply.reduce(x, axis=axis, initial=2), v,
                   f"multiply initial {dtype} {vname} axis={axis}")
            if dtype != "complex64":
                _check(lambda mod, x: mod.maximum.reduce(x, axis=axis, where=m, initial=-5), v,
                       f"maximum where {dtype} {vname} axis={axis}")


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint64", "int64", "bool"])
@pytest.mark.parametrize("op", ufuncs(binary, reorderable, lambda r: "i" in kinds(r)))
def test_chunked_exact_reductions(threads, dtype, op):
    """One output from many runs or pieces, split among threads: exact ops only (the
    reorderable ufuncs with integer loops)."""
    if dtype == "bool" and "b" not in kinds(next(r for r in UFUNC_ROWS if r.name == op)):
        pytest.skip("no bool loop (NumPy's reduce raises)")
    rng = np.random.default_rng(11)
    a = _values(rng, (7, 300, 41), dtype)
    for vname, f in VIEWS.items():
        v = f(a)
        for axis in (None, (0, 2), (1, 2), 2):
            if op in ("maximum", "minimum") or isinstance(axis, int) or axis is None:
                kw = {"axis": axis}
            else:
                kw = {"axis": axis}
            _check(lambda m, x: getattr(m, op).reduce(x, **kw), v, f"{op} {dtype} {vname} {kw}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vector_max_min_nan_and_zeros(threads, dtype):
    """The vector max/min loops (fast and exact lanes): NaN anywhere wins, the first NaN's
    payload; a zero result; long contiguous runs, odd lengths and offsets. (Which zero the
    max of a mix of 0.0 and -0.0 gives depends on NumPy's own vector width, so the zeros here
    share one sign.)"""
    rng = np.random.default_rng(13)
    for n in (1, 7, 8, 9, 127, 128, 129, 1000, 4099, 70001):
        base = rng.standard_normal(n + 3).astype(dtype)
        cases = {"plain": base[3:], "offset1": base[1:n + 1], "zeros": np.where(base[3:] > 0, -0.0, base[3:]).astype(dtype),
                 "pzeros": np.where(base[3:] < 0, 0.0, base[3:]).astype(dtype)}
        if n > 2:
            w = base[3:].copy()
            w[n // 2] = np.nan
            w[n - 1] = -np.nan
            cases["nan"] = w
        for cname, a in cases.items():
            for name in ("max", "min"):
                _check(lambda m, x: getattr(m, name)(x), a, f"{name} {dtype} n={n} {cname}")
                if n >= 8:
                    a2 = a[: n - n % 4].reshape(-1, 4)
                    _check(lambda m, x: getattr(m, name)(x, axis=1), a2, f"{name} axis=1 {dtype} n={n} {cname}")
                    _check(lambda m, x: getattr(m, name)(x, axis=0), a2, f"{name} axis=0 {dtype} n={n} {cname}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_pairwise_sums_every_length(threads, dtype):
    """The vector pairwise sum (8 lanes per block of up to 128, recursive halves) for lengths
    around every block boundary, contiguous and strided."""
    rng = np.random.default_rng(17)
    base = _values(rng, (2100,), dtype)
    for n in itertools.chain(range(0, 20), range(120, 140), (255, 256, 257, 1023, 1024, 1025, 2047)):
        for a in (base[:n], base[1:n + 1], base[: 2 * n:2], base[:n][::-1]):
            _check(lambda m, x: m.sum(x), a, f"sum {dtype} n={n} strides={a.strides}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_empty_and_0d(threads, dtype):
    for shape, axis in (((), None), ((), 0), ((0,), None), ((0, 5), 0), ((5, 0), 0), ((3, 0, 4), (0, 2)),
                        ((2, 3, 0), 1)):
        a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) + 1
        for name in ("sum", "prod"):
            _check(lambda m, x: getattr(m, name)(x, axis=axis), a, f"{name} {dtype} {shape} axis={axis}")
            _check(lambda m, x: getattr(m, name)(x, axis=axis, dtype=np.float64), a,
                   f"{name} {dtype}->float64 {shape} axis={axis}")
        if int(np.prod(shape)) > 0 or axis is not None and all(
                shape[i] != 0 for i in ((axis,) if isinstance(axis, int) else axis)):
            _check(lambda m, x: m.max(x, axis=axis), a, f"max {dtype} {shape} axis={axis}")
        else:
            with pytest.raises(ValueError):
                np.max(a, axis=axis)
            with pytest.raises(ValueError):
                npc.max(npc.asarray(a), axis=axis)


@pytest.mark.xfail(strict=True, reason="max/min of a mix of 0.0 and -0.0: NumPy's scalar loop keeps the "
                   "accumulator on ties (and its vector loops follow the CPU's vector width), npc's eight "
                   "lanes take the later element, so which zero comes out can differ")
def test_max_min_of_mixed_signed_zeros():
    a = np.array([-0.0, 0.0, 0.0, -0.0, 0.0, 0.0, 0.0], dtype=np.float32)
    e = np.max(a)
    assert np.signbit(e) == np.signbit(npc.max(npc.asarray(a))), (a, e)

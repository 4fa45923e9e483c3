"""Selection functions (take, choose, compress, select, nonzero, diag, tril, indices, grids,
...) vs NumPy over every native dtype and the shape kinds."""
import numpy as np
import pytest

import npc

from _diff import DTYPES, LAYOUTS, check, pair, values

SHAPES = [(), (0,), (6,), (3, 4), (2, 0, 3), (2, 3, 4)]


def _arr(m, x):
    return m.asarray(np.asarray(x))


CASES = {
    "take": lambda m, a: m.take(a, _arr(m, [0, -1, 2, 2])),
    "take_axis": lambda m, a: m.take(a, _arr(m, [[0, 1], [1, 0]]), axis=0),
    "take_clip": lambda m, a: m.take(a, _arr(m, [-5, 0, 99]), mode="clip"),
    "take_wrap": lambda m, a: m.take(a, _arr(m, [-5, 0, 99]), axis=-1, mode="wrap"),
    "take_along_axis": lambda m, a: m.take_along_axis(a, m.argsort(a, axis=-1, kind="stable"), -1),
    "take_along_none": lambda m, a: m.take_along_axis(a, _arr(m, [0, 0, 1]), None),
    "compress": lambda m, a: m.compress(_arr(m, [True, False, True]), a, axis=0),
    "compress_flat": lambda m, a: m.compress(_arr(m, [False, True]), a),
    "extract": lambda m, a: m.extract(_arr(m, np.arange(a.size).reshape(a.shape) % 3 == 0), a),
    "nonzero": lambda m, a: m.nonzero(a),
    "method_nonzero": lambda m, a: a.nonzero(),
    "argwhere": lambda m, a: m.argwhere(a),
    "flatnonzero": lambda m, a: m.flatnonzero(a),
    "diagonal": lambda m, a: m.diagonal(a, 1),
    "diag": lambda m, a: m.diag(a),
    "diag_k": lambda m, a: m.diag(a, -1),
    "tril": lambda m, a: m.tril(a),
    "triu": lambda m, a: m.triu(a, 1),
    "tril_neg": lambda m, a: m.tril(a, -2),
    "select": lambda m, a: m.select([_arr(m, np.arange(a.size).reshape(a.shape) % 2 == 0)], [a], default=1),
    "choose": lambda m, a: m.choose(_arr(m, np.arange(a.size).reshape(a.shape) % 2), [a, m.flip(a)]),
    "repeat_take": lambda m, a: a.take(_arr(m, [1, 0])),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(CASES))
def test_selection_functions(name, shape):
    for layout in LAYOUTS:
        check(CASES[name], values(shape, np.int16, seed=1), layout=layout)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_selection_every_dtype(dtype):
    for name in ["take_axis", "take_along_axis", "compress", "nonzero", "argwhere", "diagonal", "diag", "tril",
                 "triu", "select", "choose"]:
        for layout in ("reversed", "strided"):
            check(CASES[name], values((3, 4), dtype, seed=2), layout=layout)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_inplace_selection(dtype):
    def put(m, a):
        m.put(a, _arr(m, [0, -1, 3]), _arr(m, values((2,), dtype, seed=9)))
        return a

    def put_along(m, a):
        m.put_along_axis(a, _arr(m, [[0], [1], [0]]), _arr(m, values((1,), dtype, seed=9)), axis=1)
        return a

    def place(m, a):
        m.place(a, _arr(m, np.arange(12).reshape(3, 4) % 5 == 0), _arr(m, values((2,), dtype, seed=8)))
        return a

    def fill_diagonal(m, a):
        m.fill_diagonal(a, _arr(m, values((2,), dtype, seed=7)))
        return a

    for fn in (put, put_along, place, fill_diagonal):
        for layout in ("c", "f"):
            check(fn, values((3, 4), dtype, seed=3), layout=layout, views=False)


def test_index_grids():
    check(lambda m: m.tril_indices(4))
    check(lambda m: m.triu_indices(3, 1, 5))
    check(lambda m: m.tril_indices_from(m.zeros((3, 5)), -1))
    check(lambda m: m.indices((2, 3)))
    check(lambda m: m.indices((2, 3), dtype=np.int16, sparse=True))
    check(lambda m: m.meshgrid(m.arange(3), m.arange(4.0)))
    check(lambda m: m.meshgrid(m.arange(3), m.arange(4), m.arange(2), indexing="ij", sparse=True))
    check(lambda m: m.mgrid[0:3, 1:5:2])
    check(lambda m: m.mgrid[0:1:5j])
    check(lambda m: m.ogrid[0:3, 0:4])
    check(lambda m: m.r_[1:4, 7, [8, 9]])
    check(lambda m: m.r_[m.arange(3), m.zeros(2)])
    check(lambda m: m.r_[-1:1:5j])
    check(lambda m: m.c_[m.arange(3), m.arange(3.0)])
    check(lambda m: m.r_["0,2", [1, 2], [3, 4]])
    check(lambda m: m.ix_(m.asarray([0, 2]), m.asarray([True, False, True])))
    check(lambda m: m.diag_indices(3))
    check(lambda m: m.piecewise(m.arange(-3.0, 4.0), [m.arange(-3.0, 4.0) < 0], [lambda v: -v, lambda v: v * 2])
          if m is np else m.piecewise(m.arange(-3.0, 4.0), [m.asarray(np.arange(-3.0, 4.0) < 0)],
                                      [lambda v: m.asarray(-np.asarray(v)), lambda v: m.asarray(np.asarray(v) * 2)]))


@pytest.mark.parametrize("fn", [
    lambda m: m.take(m.arange(3), m.asarray([3])),
    lambda m: m.take(m.arange(3), m.asarray([1.0])),
    lambda m: m.take(m.arange(3), m.asarray([0]), axis=1),
    lambda m: m.choose(m.asarray([0, 2]), [m.arange(2), m.arange(2)]),
    lambda m: m.compress(m.asarray([True] * 5), m.arange(3)),
    lambda m: m.diag(m.zeros((2, 2, 2))),
    lambda m: m.select([m.asarray([1, 0])], [m.arange(2)]),
    lambda m: m.put(m.arange(3), m.asarray([5]), m.asarray([1])),
    lambda m: m.nonzero(m.asarray(1)),
    lambda m: m.take_along_axis(m.zeros((2, 2)), m.zeros(2, dtype=np.int64), 0),
])
def test_selection_errors(fn):
    try:
        fn(np)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            fn(npc)
        return
    pytest.fail("NumPy did not raise")


NUMERIC = [np.int8, np.uint16, np.int32, np.int64, np.float16, np.float32, np.float64, np.complex64, np.complex128]


@pytest.mark.parametrize("dtype", NUMERIC + [np.bool_], ids=lambda d: np.dtype(d).name)
def test_differences(dtype):
    for layout in LAYOUTS:
        for shape in [(7,), (3, 5), (2, 0, 4)]:
            check(lambda m, a: m.diff(a), values(shape, dtype, seed=4), layout=layout, views=False)
            check(lambda m, a: m.diff(a, n=2, axis=0), values(shape, dtype, seed=4), layout=layout, views=False)
            check(lambda m, a: m.diff(a, prepend=a.dtype.type(1), append=a[..., :1]), values(shape, dtype, seed=4),
                  layout=layout, views=False)
        if dtype is not np.bool_:
            check(lambda m, a: m.ediff1d(a, to_begin=a[:1], to_end=a[-2:]), values((6,), dtype, seed=2),
                  layout=layout, views=False)
    check(lambda m, a: m.diff(a), values((), dtype), views=False)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_gradient(dtype):
    for layout in LAYOUTS:
        check(lambda m, a: m.gradient(a), values((6,), dtype, seed=3), layout=layout, views=False)
        check(lambda m, a: m.gradient(a, 2.0, edge_order=2), values((3, 6), dtype, seed=3), layout=layout,
              views=False)
        check(lambda m, a: m.gradient(a, axis=0), values((4, 6), dtype, seed=3), layout=layout, views=False)
        check(lambda m, a: m.gradient(a, m.asarray(np.array([0.0, 1.0, 3.0, 4.0, 8.0, 9.0]))),
              values((6,), dtype, seed=3), layout=layout, views=False)


def test_interp():
    xp = np.array([-2.0, 0.0, 1.0, 1.0, 4.0, 7.5])
    fp = values((6,), np.float64, seed=3)
    x = np.array([-5.0, -2.0, -1.0, 0.0, 0.5, 1.0, 2.0, 4.0, 7.5, 9.0, np.nan, np.inf])
    check(lambda m, a, b, c: m.interp(a, b, c), x, xp, fp, views=False)
    check(lambda m, a, b, c: m.interp(a, b, c, left=-1.0, right=99.0), x, xp, fp, views=False)
    check(lambda m, a, b, c: m.interp(a, b, c), x, xp, fp.astype(np.complex128) * (1 + 2j), views=False)
    check(lambda m, a, b, c: m.interp(a, b, c, period=3.0), x[:10], np.array([0.0, 1.0, 2.5]),
          np.array([1.0, -1.0, 4.0]), views=False)
    assert type(npc.interp(0.5, npc.asarray([0.0, 1.0]), npc.asarray([0.0, 2.0]))) is np.float64
    with pytest.raises(ValueError):
        npc.interp(npc.asarray([1.0]), npc.asarray([0.0, 1.0]), npc.asarray([1.0]))


@pytest.mark.parametrize("dtype", NUMERIC + [np.bool_], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate(dtype, mode):
    for na, nv in [(7, 3), (3, 7), (4, 4), (1, 5)]:
        a, v = values((na,), dtype, seed=na), values((nv,), dtype, seed=nv + 10)
        check(lambda m, x, y: m.convolve(x, y, mode), a, v, views=False)
        check(lambda m, x, y: m.correlate(x, y, mode), a, v, views=False)
    with pytest.raises(ValueError):
        npc.convolve(npc.zeros(0), npc.zeros(3))


@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: np.dtype(d).name)
def test_trace(dtype):
    for layout in LAYOUTS:
        check(lambda m, a: m.trace(a), values((4, 5), dtype, seed=1), layout=layout, views=False)
        check(lambda m, a: m.trace(a, 1, 0, 2), values((3, 2, 4), dtype, seed=1), layout=layout, views=False)

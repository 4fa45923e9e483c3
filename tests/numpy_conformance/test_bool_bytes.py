"""Bool arrays viewing bytes other than 0 and 1 (``x.view(bool)``): NumPy reads every
nonzero byte as True in ufuncs, comparisons, casts and reductions; so must npc
(Note [bool bytes] in src/ops/ufunc.cpp, casts from bool in src/core/cast.cpp, reductions in src/ops/reduce.cpp)."""
import warnings

import numpy as np
import pytest

import npc
from npc import _core

# The ufuncs of the op table with a bool loop ("??->?", "?->?") and one output.
BOOL_UFUNCS = [r for r in _core.op_table()
               if r.kind == 0 and r.nout == 1 and any(sig[0] == "?" for sig in r.loops.split())]

BYTES = [2, 0, 1, 255, 4, 128, 0, 3]
MASK = [True, True, False, True, False, False, True, True]


def views(lib, layout):
    raw = lib.array(BYTES * 2, lib.uint8)
    if layout == "strided":
        raw = lib.array([b for x in BYTES * 2 for b in (x, 9)], lib.uint8)[::2]
    elif layout == "reversed":
        raw = lib.array((BYTES * 2)[::-1], lib.uint8)[::-1]
    return raw.view(bool), lib.array(MASK * 2)


OPS = {
    "eq_true": lambda m, a, o: a == True,  # noqa: E712 -- the comparison under test
    "eq_one": lambda m, a, o: a == 1,
    "eq": lambda m, a, o: a == o,
    "ne": lambda m, a, o: a != o,
    "eq_self_reversed": lambda m, a, o: a == a[::-1],
    "and": lambda m, a, o: a & o,
    "or": lambda m, a, o: a | o,
    "xor": lambda m, a, o: a ^ o,
    "invert_operator": lambda m, a, o: ~a,
    "times_int": lambda m, a, o: a * 1,
    "plus_float": lambda m, a, o: a + 0.5,
    "astype_int64": lambda m, a, o: a.astype(m.int64),
    "astype_uint8": lambda m, a, o: a.astype(m.uint8),
    "astype_float32": lambda m, a, o: a.astype(m.float32),
    "astype_complex": lambda m, a, o: a.astype(m.complex64),
    "sum": lambda m, a, o: a.sum(),
    "sum_int8": lambda m, a, o: a.sum(dtype=m.int8),
    "cumsum": lambda m, a, o: a.cumsum(),
    "mean": lambda m, a, o: a.mean(),
    "any": lambda m, a, o: a.any(),
    "all": lambda m, a, o: a[2:4].all(),
    "max": lambda m, a, o: a.max(),
    "min": lambda m, a, o: a[:1].min(),
    "count_nonzero": lambda m, a, o: m.count_nonzero(a),
    "nonzero": lambda m, a, o: a.nonzero()[0],
    "where": lambda m, a, o: m.where(a, 10, 20),
    "mask_index": lambda m, a, o: m.arange(a.size)[a],
}
# Each of them on the bool view (and the mask, for binary ones).
OPS.update({r.name: (lambda m, a, o, name=r.name, nin=r.nin: getattr(m, name)(*(a, o)[:nin])) for r in BOOL_UFUNCS})


def _numpy_copies_bool_bytes(name):
    """NumPy's bool loop of the unary ufunc `name` copies its input's bytes (floor, ceil and
    trunc of a bool are the identity there), where npc's kernels see normalised 0/1 values."""
    uf = getattr(np, name, None)
    if not isinstance(uf, np.ufunc) or uf.nin != 1:
        return False
    r = uf(np.array([2], np.uint8).view(bool))
    return r.dtype == bool and r.view(np.uint8)[0] == 2


@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed"])
@pytest.mark.parametrize("name", list(OPS))
def test_nonzero_bytes_are_true(request, name, layout):
    if _numpy_copies_bool_bytes(name):
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "NumPy's floor/ceil/trunc of a bool view copy its bytes (2 stays 2); npc's bool inputs are read "
            "as 0/1 (Note [bool bytes]), so the result holds 1: equal as bools, not as bytes")))
    fn = OPS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exp = fn(np, *views(np, layout))
        got = fn(npc, *views(npc, layout))
    exp = np.asarray(exp)
    got_np = np.asarray(got)
    assert got_np.dtype == exp.dtype and got_np.shape == exp.shape
    # Results compare as NumPy's bytes (a bool result of npc holds 0/1, like NumPy's).
    np.testing.assert_array_equal(got_np.view(np.uint8) if exp.dtype == bool else got_np,
                                  exp.view(np.uint8) if exp.dtype == bool else exp)


@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed"])
def test_argmax_argmin_of_bool_view(layout):
    a, _ = views(npc, layout)
    e, _ = views(np, layout)
    assert int(a.argmax()) == int(e.argmax()) and int(a.argmin()) == int(e.argmin())
    assert np.asarray(a.reshape(4, 4).argmax(axis=1)).tolist() == e.reshape(4, 4).argmax(axis=1).tolist()


def test_unique_of_bool_view():
    a, _ = views(npc, "contiguous")
    e, _ = views(np, "contiguous")
    assert np.asarray(npc.unique(a)).view(np.uint8).tolist() == np.unique(e).view(np.uint8).tolist()


@pytest.mark.parametrize("ufunc", [r.name for r in BOOL_UFUNCS if r.nin == 2])
def test_reductions_of_bool_view(ufunc):
    a = npc.array([2, 255, 0, 1, 4, 4], npc.uint8).view(bool)
    e = np.array([2, 255, 0, 1, 4, 4], np.uint8).view(bool)
    for sl in (slice(0, 2), slice(None), slice(None, None, -1)):
        got = np.asarray(getattr(npc, ufunc).reduce(a[sl]))
        exp = np.asarray(getattr(np, ufunc).reduce(e[sl]))
        assert got.dtype == exp.dtype and got.view(np.uint8 if exp.dtype == bool else exp.dtype) == \
            exp.view(np.uint8 if exp.dtype == bool else exp.dtype)


PRODUCTS = {
    "matmul": lambda lib, a, b: a @ b,
    "dot": lambda lib, a, b: lib.dot(a, b),
    "matvec": lambda lib, a, b: a @ b[:, 0],
    "vector dot": lambda lib, a, b: a[0] @ b[:, 0],
    "einsum": lambda lib, a, b: lib.einsum("ij,jk->ik", a, b),
    "tensordot": lambda lib, a, b: lib.tensordot(a, b, 1),
    "inner": lambda lib, a, b: lib.inner(a, b),
    "vecdot": lambda lib, a, b: lib.vecdot(a, b),
}


@pytest.mark.parametrize("name", list(PRODUCTS))
def test_products_of_bool_views(name):
    """A bool product is an OR of ANDs of truth values: bytes 2 and 128 make True, not 2 * 128."""
    rng = np.random.default_rng(7)
    a = rng.choice(np.array([0, 2, 4, 128, 1, 255], np.uint8), (9, 9)).view(bool)
    b = rng.choice(np.array([0, 2, 4, 128, 1, 255], np.uint8), (9, 9)).view(bool)
    want = np.asarray(PRODUCTS[name](np, a, b))
    got = np.asarray(PRODUCTS[name](npc, npc.asarray(a), npc.asarray(b)))
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.astype(np.uint8) != 0, want.astype(np.uint8) != 0)


@pytest.mark.parametrize("mode", ["npc", "eager", "fused"])
@pytest.mark.parametrize("ufunc", ["bitwise_xor", "logical_xor", "not_equal", "bitwise_and", "equal", "minimum",
                                   "logical_or", "maximum", "add", "multiply"])
def test_accumulate_of_bool_view(ufunc, mode):
    """The scan reads truth values (NumPy keeps the first element's own byte; npc's is 1, the
    same truth value)."""
    a = np.array([2, 4, 1, 8, 0, 3, 128, 0, 255], np.uint8).view(bool)
    f = lambda x: getattr(np, ufunc).accumulate(x)  # noqa: E731
    want = f(a)
    got = np.asarray(getattr(npc, ufunc).accumulate(npc.asarray(a)) if mode == "npc"
                     else npc.compile(f, backend=mode)(a))
    assert got.dtype == want.dtype
    assert np.array_equal(got.astype(np.uint8) != 0, want.astype(np.uint8) != 0)

"""npc.compile of zeros_like/ones_like/empty_like/full_like of traced arrays (a Fill node of
the prototype's shape, symbolic dims included), called with changing sizes, and empty
take_along_axis results after a graph break. Every call is compared with the same function
run by NumPy (shape, dtype, values; empty_like: shape and dtype only)."""
import numpy as np
import pytest

import npc
from npc import compiler

BACKENDS = ("eager", "fused")


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-compile-like-creation")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def assert_same(got, want, values=True):
    assert type(got) is type(want), (type(got), type(want))
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    if values:
        np.testing.assert_array_equal(g, w)


LIKE = {
    "ones_like": (lambda x: np.ones_like(x), True),
    "zeros_like": (lambda x: np.zeros_like(x), True),
    "empty_like": (lambda x: np.empty_like(x), False),
    "full_like": (lambda x: np.full_like(x, 3), True),
    "full_like_float": (lambda x: np.full_like(x, 2.5, dtype=np.float32), True),
    "ones_like_dtype": (lambda x: np.ones_like(x, dtype=np.int16), True),
    "ones_like_plus": (lambda x: np.ones_like(x) + x, True),
    "zeros_like_of_view": (lambda x: np.zeros_like(x[1:]), True),
    "npc_ones_like": (lambda x: npc.ones_like(x) * 2, True),
    "full_like_runtime_scalar": (None, True),
}


def full_like_scalar(x, v):
    return np.full_like(x, v)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(LIKE))
@pytest.mark.parametrize("dynamic", [None, True])
def test_like_creation_follows_the_prototype_size(name, dynamic, backend):
    fn, values = LIKE[name]
    if fn is None:
        fn = full_like_scalar
    cf = npc.compile(fn, backend=backend, dynamic=dynamic)
    for n in (7, 8, 6, 9, 8):
        args = (np.arange(float(n)),) if fn is not full_like_scalar else (np.arange(float(n)), 0.5 * n)
        got, want = cf(*args), fn(*args)
        if name.startswith("npc_"):
            want = np.asarray(want)  # eager npc returns npc arrays; compiled, NumPy in -> NumPy out
        assert_same(got, want, values)


@pytest.mark.parametrize("backend", BACKENDS)
def test_like_creation_of_2d_prototype_and_fresh_results(backend):
    cf = npc.compile(lambda x: np.ones_like(x.T), backend=backend)
    results = []
    for shape in ((2, 3), (2, 4), (5, 4), (5, 4)):
        x = np.ones(shape)
        r = cf(x)
        assert_same(r, np.ones_like(x.T))
        results.append(r)
    # Each replay returns a new array: writing into one result leaves the next one alone.
    results[-2][...] = 7
    assert not np.shares_memory(results[-1], results[-2])
    assert (results[-1] == 1).all()


def sorted_along_after_break(a):
    float(a.sum())
    return np.take_along_axis(a, np.argsort(a), axis=-1)


def sorted_along_axis0_after_break(a):
    npc.compiler.graph_break()
    return np.take_along_axis(a, np.argsort(a, axis=0), axis=0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [sorted_along_after_break, sorted_along_axis0_after_break])
@pytest.mark.parametrize("dtype", [np.uint32, np.int8, np.float32, np.bool_])
def test_empty_take_along_axis_after_a_break_keeps_the_dtype(fn, dtype, backend):
    cf = npc.compile(fn, backend=backend)
    for shape in ((3,), (0,), (2, 3), (2, 0), (0, 3), (4, 5), (4, 0)):
        if fn is sorted_along_axis0_after_break and len(shape) == 1:
            shape = shape + (2,)
        a = np.ones(shape, dtype)
        assert_same(cf(a), fn(a))


def imag_of_real(a):
    return np.imag(a)


def imag_of_real_then_empty_like(a):
    v = np.empty_like(np.imag(a))
    v[...] = 2
    return v


def imag_attribute_of_real(a):
    return a.imag * 1, np.real(a) + 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [imag_of_real, imag_of_real_then_empty_like, imag_attribute_of_real])
@pytest.mark.parametrize("dtype", [np.int64, np.float32])
def test_imaginary_part_of_a_real_array_follows_the_size(fn, dtype, backend):
    # The imaginary part of a real array is zeros of its shape, symbolic sizes included.
    cf = npc.compile(fn, backend=backend)
    for n in (2, 3, 4, 5, 4):
        a = np.arange(n, dtype=dtype)
        a[0] = np.nan if dtype == np.float32 else a[0]
        got, want = cf(a), fn(a)
        for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
            assert_same(g, w)


@pytest.mark.parametrize("backend", BACKENDS)
def test_imaginary_part_of_a_real_array_is_read_only(backend):
    def f(a):
        v = np.imag(a)
        v[...] = 1
        return v

    with pytest.raises(ValueError, match="read-only"):
        f(np.ones(3))
    cf = npc.compile(f, backend=backend)
    for n in (3, 4, 5):
        with pytest.raises(ValueError, match="read-only"):
            cf(np.ones(n))

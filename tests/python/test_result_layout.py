"""Memory layout of results, eager and compiled (both backends), against NumPy: NumPy keeps
the input's memory order (order='K') in most functions that make new arrays, and users see
it through `.strides`, `.flags` and C code that receives the buffer.

- sort/partition copy their input with order='K' then sort in place (Note [sorted copies
  keep the layout] in src/ops/sort.cpp); argsort/argpartition indices are C-ordered;
- concatenate/stack/vstack/hstack use the inputs' common order (Note [concatenate layout] in
  src/core/creation.cpp);
- median along one axis is laid out as a reduction of x (Note [median layout] in
  python/npc/_quantile.py);
- zeros_like/ones_like/full_like/empty_like keep the prototype's layout in compiled code too;
- dtype-changing elementwise ops keep it in the eager backend of npc.compile (Note [node
  values are C-ordered] in src/tracer/interpret.cpp).
"""
import numpy as np
import pytest

import npc

MODES = ("eager", "fused", "compiled-eager")


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-result-layout")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        npc.compiler.reset()
        yield
        npc.compiler.reset()


def run(f, mode, *args):
    if mode == "eager":
        r = f(*(npc.asarray(a) for a in args))
        return tuple(np.asarray(x) for x in r) if isinstance(r, tuple) else np.asarray(r)
    backend = "eager" if mode == "compiled-eager" else "fused"
    return npc.compile(f, backend=backend)(*args)


def f_ordered(shape, dtype=np.float64):
    n = int(np.prod(shape))
    return np.asfortranarray((np.arange(n)[::-1] % 7).astype(dtype).reshape(shape))


F2 = f_ordered((4, 6))
F3 = f_ordered((3, 4, 5))
F2I = f_ordered((4, 6), np.int64)


def assert_same_layout(got, want, values=True):
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.strides == want.strides, (got.strides, want.strides)
    assert got.flags.f_contiguous == want.flags.f_contiguous
    assert got.flags.c_contiguous == want.flags.c_contiguous
    if values:
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- F8: functions of F inputs
SAME = {
    "sort axis 0": lambda a: np.sort(a, axis=0),
    "sort axis -1": lambda a: np.sort(a),
    "sort axis None": lambda a: np.sort(a, axis=None),
    "argsort stable": lambda a: np.argsort(a, axis=0, kind="stable"),
    "concatenate axis 0": lambda a: np.concatenate([a, a], axis=0),
    "concatenate axis 1": lambda a: np.concatenate([a, a * 2], axis=1),
    "concatenate of F and C": lambda a: np.concatenate([a, np.ascontiguousarray(a)]),
    "stack": lambda a: np.stack([a, a]),
    "stack last": lambda a: np.stack([a, a], axis=-1),
    "vstack": lambda a: np.vstack([a, a]),
    "hstack": lambda a: np.hstack([a, a]),
    "median axis 0": lambda a: np.median(a, axis=0),
    "median axis 1": lambda a: np.median(a, axis=1),
    "nanmedian axis 0": lambda a: np.nanmedian(a, axis=0),
    "cumsum axis 0": lambda a: np.cumsum(a, axis=0),
    "cumprod axis 1": lambda a: np.cumprod(a, axis=1),
    "np.copy": lambda a: np.copy(a),
    "astype float32": lambda a: a.astype(np.float32),
    "roll": lambda a: np.roll(a, 1, axis=0),
    "pad": lambda a: np.pad(a, 1),
    "pad edge": lambda a: np.pad(a, 1, mode="edge"),
}
EAGER_ONLY = {"pad edge"}  # in compiled code: a fallback or a break, compared eagerly only


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("x", [F2, F3], ids=["F 2-d", "F 3-d"])
@pytest.mark.parametrize("name", list(SAME))
def test_results_of_f_ordered_inputs_have_numpys_layout(name, x, mode):
    f = SAME[name]
    if name in EAGER_ONLY and mode != "eager":
        pytest.skip("eager-only case")
    want = f(x)
    assert_same_layout(run(f, mode, x), want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["partition", "partition axis 0"])
def test_partition_keeps_the_layout(name, mode):
    axis = -1 if name == "partition" else 0
    f = lambda a: np.partition(a, 1, axis=axis)  # noqa: E731
    want = f(F3)
    got = run(f, mode, F3)
    assert_same_layout(got, want, values=False)
    # The order around the kth element is unspecified: the kth values and the sorted lanes agree.
    np.testing.assert_array_equal(np.take(np.asarray(got), 1, axis=axis), np.take(want, 1, axis=axis))
    np.testing.assert_array_equal(np.sort(np.asarray(got), axis=axis), np.sort(want, axis=axis))


@pytest.mark.parametrize("mode", MODES)
def test_integer_round_and_nan_to_num_copy_in_the_input_layout(mode):
    for f in (lambda a: np.round(a), lambda a: np.nan_to_num(a)):
        assert_same_layout(run(f, mode, F2I), f(F2I))


def test_median_keepdims_indexes_with_newaxis():
    # NumPy's _ureduce adds the reduced axes back with np.newaxis (stride 0).
    for axis in (None, 0, 1):
        want = np.median(F2, axis=axis, keepdims=True)
        assert_same_layout(np.median(npc.asarray(F2), axis=axis, keepdims=True), want)


# ---------------------------------------------------------------- F9: *_like in compiled code
LIKE = {
    "zeros_like": lambda a: np.zeros_like(a),
    "ones_like": lambda a: np.ones_like(a),
    "full_like": lambda a: np.full_like(a, 2.5),
    "empty_like": lambda a: np.empty_like(a),
    "ones_like dtype": lambda a: np.ones_like(a, dtype=np.int16),
    "zeros_like order=A": lambda a: np.zeros_like(a, order="A"),
    "zeros_like order=C": lambda a: np.zeros_like(a, order="C"),
    "ones_like order=F": lambda a: np.ones_like(a, order="F"),
    "zeros_like of a transpose": lambda a: np.zeros_like(a.transpose(1, 2, 0)),
    "ones_like plus": lambda a: np.ones_like(a) + a,
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(LIKE))
def test_like_functions_keep_the_prototype_layout(name, mode):
    f = LIKE[name]
    want = f(F3)
    for _ in range(2):  # the tracing call and a replay
        assert_same_layout(run(f, mode, F3), want, values=not name.startswith("empty"))


# ---------------------------------------------------------------- F10: dtype-changing ufuncs
CHANGING = {
    "a > 0": lambda a: a > 0,
    "a > 0.5": lambda a: a > 0.5,
    "astype float32": lambda a: a.astype(np.float32),
    "a + 1.5": lambda a: a + 1.5,
    "sqrt": lambda a: np.sqrt(a),
    "true divide": lambda a: a / 3,
    "where of a cast": lambda a: np.where(a > 2, a, 0.5),
    "cast then sort": lambda a: np.sort(a * 0.5, axis=0),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("x", [F2I, F3.astype(np.int32), F2I[:, ::2]], ids=["F int64", "F 3-d int32", "F strided"])
@pytest.mark.parametrize("name", list(CHANGING))
def test_dtype_changing_elementwise_ops_keep_the_layout(name, x, mode):
    f = CHANGING[name]
    assert_same_layout(run(f, mode, x), f(x))


_BINS = np.sort(np.random.default_rng(3).random(7))
SEARCHES = {
    "searchsorted": lambda a: np.searchsorted(_BINS, a),
    "searchsorted of a K-order result": lambda a: np.searchsorted(_BINS, a + 0.0, side="right"),
    "digitize": lambda a: np.digitize(a, _BINS),
    "interp": lambda a: np.interp(a, _BINS, _BINS ** 2),
    "isin": lambda a: np.isin(np.round(a, 1), np.round(_BINS, 1)),
    "astype C without a copy": lambda a: a.astype(np.float64, order="C", copy=False),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_library_functions_read_f_ordered_values(name, mode):
    # A traced F-ordered value asked for with astype(order='C', copy=False) was returned as
    # it is, and C++ functions reading its data as C-ordered (searchsorted) gave results in
    # the wrong places in compiled code.
    f = SEARCHES[name]
    x = np.asfortranarray(np.random.default_rng(4).random((4, 5)))
    want = f(x)
    for _ in range(2):
        got = run(f, mode, x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert got.flags.c_contiguous == want.flags.c_contiguous


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_astype_without_copy_copies_where_numpy_does(order, mode):
    # order='A' asks for F when the array is F-contiguous, else C: a non-contiguous array is
    # copied (C-ordered), and writes into the copy never reach the argument.
    def f(x):
        y = x.astype(np.float64, order=order, copy=False)
        y[...] = -7.0
        return y
    for x in (np.arange(12.0).reshape(3, 4)[:, ::2], np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1),
              np.asfortranarray(np.arange(12.0).reshape(3, 4)), np.arange(12.0).reshape(3, 4)):
        want_x = x.copy()
        want = f(want_x)
        got_x = x.copy()
        got = run(f, mode, got_x) if mode != "eager" else np.asarray(f(npc.asarray(got_x)))
        np.testing.assert_array_equal(got, want)
        assert got.flags.c_contiguous == want.flags.c_contiguous
        assert got.flags.f_contiguous == want.flags.f_contiguous
        if mode == "eager":
            continue  # npc.asarray copies a NumPy array: its writes cannot reach got_x
        np.testing.assert_array_equal(got_x, want_x)

"""Fused float sums over the last axis add in NumPy's pairwise order, bit for bit (Note
[summation] in src/fusion/lower_reduce.cpp): np.sum, np.mean and x.sum(axis=-1) of computed
and argument values at every length up to 300 (the 8-accumulator blocks, the tail, the
split above 128) and at long lengths (the chunks of npc's tree and their combination), row
sums of 2-D arrays, and retraces at new sizes (the generic kernel of a runtime length).
"""
import numpy as np
import pytest

import npc

ALL_LENGTHS = list(range(1, 301)) + [1000, 1024, 1025, 2048, 5000, 8192, 8193, 10000, 100000]
# Every length where the order changes shape (below 8, blocks of 8, 128, splits) and long ones.
SOME_LENGTHS = list(range(1, 20)) + [23, 64, 127, 128, 129, 136, 137, 255, 256, 257, 300, 1025, 5000, 10000, 100000]


def same_bits(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def _compiled_all(fn, cases, tmp_path):
    """(key, fused, numpy) for fn over every case; each case compiles afresh (a new shape is
    a new trace, and past the recompile limit npc runs eagerly)."""
    out = []
    with npc.config.patch(cache_dir=str(tmp_path)):
        for key, x in cases:
            npc.compiler.reset()
            before = npc.compiler.stats()["eager_runs"]
            r = npc.compile(fn, backend="fused")(x)
            assert npc.compiler.stats()["eager_runs"] == before, f"{key} ran eagerly"
            out.append((key, r, fn(x)))
    return out


def _groups(lengths, k):
    return [lengths[i:i + k] for i in range(0, len(lengths), k)]


@pytest.mark.parametrize(
    "dtype,lengths",
    [(np.float32, ALL_LENGTHS), (np.float64, SOME_LENGTHS), (np.float16, SOME_LENGTHS)],
    ids=["f4", "f8", "f2"],
)
def test_sums_and_means_are_numpys_bits(dtype, lengths, tmp_path):
    # Several lengths per trace (a list of arrays), so that few translation units compile.
    rng = np.random.default_rng(0)
    fn = lambda xs: [np.sum(a * 1) for a in xs] + [np.mean(a + 0) for a in xs] + [np.sum(a) for a in xs]
    cases = [(g, [(rng.standard_normal(n) * 100).astype(dtype) for n in g]) for g in _groups(lengths, 32)]
    bad = []
    for g, f, e in _compiled_all(fn, cases, tmp_path):
        for j, (a, b) in enumerate(zip(f, e)):
            if not same_bits(a, b):
                bad.append((["sum", "mean", "sum_arg"][j // len(g)], g[j % len(g)], a, b))
    assert not bad, bad[:5]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f4", "f8"])
def test_row_sums_are_numpys_bits(dtype, tmp_path):
    rng = np.random.default_rng(1)
    fns = {
        "rows": lambda a: (a * 1).sum(axis=-1),
        "rows_keepdims": lambda a: (a * a).sum(axis=-1, keepdims=True),
        "row_means": lambda a: np.mean(a - 1, axis=-1),
        # softmax's shape with an exact elementwise part (exp's bits are not the sum's topic)
        "normalised": lambda x: (lambda e: e / e.sum(axis=-1, keepdims=True))(abs(x - x.max(axis=-1, keepdims=True))),
        "strided": lambda a: a[:, ::2].sum(axis=-1),
    }
    cases = [((m, n), rng.standard_normal((m, n)).astype(dtype))
             for m, n in [(3, 8), (7, 100), (64, 300), (300, 1000), (3, 20000)]]
    fn = lambda x: [f(x) for f in fns.values()]
    bad = [(name, s) for s, f, e in _compiled_all(fn, cases, tmp_path) for name, a, b in zip(fns, f, e)
           if not same_bits(a, b)]
    assert not bad, bad


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f4", "f8"])
def test_retrace_at_new_sizes_keeps_numpys_order(dtype, tmp_path):
    # One compiled function called at several row lengths: the retraces (static and runtime
    # lengths alike) sum every row as NumPy does, the 3-element row included.
    rng = np.random.default_rng(2)
    f = lambda a: (a * 1).sum(axis=-1)
    with npc.config.patch(cache_dir=str(tmp_path)):
        npc.compiler.reset()
        g = npc.compile(f, backend="fused")
        before = npc.compiler.stats()["eager_runs"]
        for n in [3, 300, 3, 17, 1000, 3]:
            x = (rng.standard_normal((4, n)) * 1e3).astype(dtype)
            assert same_bits(g(x), f(x)), n
        assert npc.compiler.stats()["eager_runs"] == before


def test_single_sum_does_not_depend_on_threads(tmp_path):
    # A sum to one value runs its pairwise tree on one thread: the bits are NumPy's whatever
    # the thread count (Note [summation]).
    x = np.random.default_rng(3).standard_normal(1_000_003).astype(np.float32)
    f = lambda a: np.sum(a * 2)
    old = npc.get_num_threads()
    try:
        with npc.config.patch(cache_dir=str(tmp_path)):
            for nt in [1, 2, 4]:
                npc.set_num_threads(nt)
                npc.compiler.reset()
                assert same_bits(npc.compile(f, backend="fused")(x), f(x)), nt
    finally:
        npc.set_num_threads(old)


def test_full_sum_of_a_2d_array_is_one_pairwise_run():
    # NumPy merges the contiguous axes: one pairwise run over the 15 elements (6.25), not
    # the rows and then their sums (0.0) (Note [one pairwise run] in lower_reduce.cpp).
    a = np.array([0.0, -3.0, -0.5, -1.5, 1.0, -3.0, 3.4028234663852886e+38, 1.5, -1.5, -3.0,
                  -3.4028234663852886e+38, 2.5, 2.25, -1.0, 2.5], np.float32).reshape(3, 5)
    got = npc.compile(lambda x: x.sum(), backend="fused")(a)
    assert np.asarray(got).tobytes() == np.asarray(a.sum()).tobytes()


# Full sums of views whose axes merge in memory (C, transposed, stepped rows that chain) or,
# up to NumPy's 8192-element buffer, of views that do not (slices, reversed axes); sums over
# the trailing axes of views where those merge (a size-1 axis inserted: two reduced axes for
# 2-D operands too).
MULTI_AXIS_VIEWS = {
    "C": lambda a: a, "T": lambda a: a.T, "computed": lambda a: a * 1, "computed_T": lambda a: (a - 1).T,
    "rev0": lambda a: a[::-1], "rev_last": lambda a: a[..., ::-1], "slice": lambda a: a[..., 1:],
    "step": lambda a: a[..., ::2], "swap_rev": lambda a: np.swapaxes(a, 0, -1)[..., ::-1],
}
FULL_SUMS = {"sum": lambda v: v.sum(), "sum_keepdims": lambda v: np.sum(v, keepdims=True), "mean": lambda v: v.mean()}
TRAILING_SUMS = {
    "trailing": lambda v: v[:, None].sum(axis=tuple(range(1, v.ndim + 1))),
    "trailing_keepdims": lambda v: v[:, None].sum(axis=tuple(range(1, v.ndim + 1)), keepdims=True),
    "trailing_mean": lambda v: np.mean(v[:, None], axis=tuple(range(1, v.ndim + 1))),
}
MULTI_AXIS_CASES = {(v, s): (MULTI_AXIS_VIEWS[v], f) for v in MULTI_AXIS_VIEWS for s, f in FULL_SUMS.items()}
MULTI_AXIS_CASES.update({(v, s): (MULTI_AXIS_VIEWS[v], f) for v in ("C", "computed", "rev0") for s, f in TRAILING_SUMS.items()})


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=["f4", "f8", "f2"])
def test_multi_axis_sums_are_numpys_runs(dtype, tmp_path):
    # Sums over several axes that NumPy adds as one pairwise run per output, bit for bit
    # (Note [one pairwise run] in lower_reduce.cpp).
    rng = np.random.default_rng(4)
    names = list(MULTI_AXIS_CASES)
    fns = [lambda a, vf=vf, sf=sf: sf(vf(a)) for vf, sf in MULTI_AXIS_CASES.values()]
    fn = lambda x: [f(x) for f in fns]
    shapes = [(3, 5), (7, 9), (2, 300), (1, 30), (30, 1), (3, 4, 5), (5, 7, 30), (2, 1, 9), (90, 91)]
    if dtype != np.float16:
        shapes.append((300, 301))
    cases = [(shape, (rng.standard_normal(shape) * 100).astype(dtype)) for shape in shapes]
    merged = ("C", "T", "computed", "computed_T")
    bad = [(name, s) for s, f, e in _compiled_all(fn, cases, tmp_path) for name, a, b in zip(names, f, e)
           if not same_bits(a, b) and (name[0] in merged or name[1] in TRAILING_SUMS or np.prod(s) <= 8192)]
    assert not bad, bad


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f4", "f8"])
def test_multi_axis_sums_at_runtime_sizes(dtype, tmp_path):
    # Retraces at new sizes (runtime extents: the merged index is divided at run time).
    rng = np.random.default_rng(5)
    fns = {"sum": lambda v: v.sum(), "T": lambda v: v.T.sum(keepdims=True), "computed": lambda v: np.mean(v * 1),
           "trailing": lambda v: v[:, None].sum(axis=(1, 2, 3))}
    with npc.config.patch(cache_dir=str(tmp_path)):
        npc.compiler.reset()
        for name, f in fns.items():
            g = npc.compile(f, backend="fused")
            for shape in [(3, 4, 5), (4, 7, 3), (6, 11, 13), (20, 30, 40), (2, 3, 1)]:
                x = (rng.standard_normal(shape) * 1e3).astype(dtype)
                assert same_bits(g(x), f(x)), (name, shape)


def test_sum_with_a_dtype_cast_adds_numpys_buffers(tmp_path):
    # Note [buffered reduction casts] in src/tracer/trace_hooks.cpp (-38.68177, where one
    # pairwise run of the cast values gave -38.681732).
    h = np.random.default_rng(0).standard_normal((300, 301)).astype(np.float16)
    f = lambda a: a.sum(dtype=np.float32)
    with npc.config.patch(cache_dir=str(tmp_path)):
        assert same_bits(npc.compile(f, backend="fused")(h.ravel()), f(h.ravel()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=["f4", "f8", "f2"])
def test_long_costly_sums_on_threads_are_numpys_bits(dtype, tmp_path):
    # Note [parallel pairwise sums] in src/fusion/kir_passes.cpp: the tree's chunks are summed
    # on threads (in batches of npk::kPairwiseBatch chunks: 2**21 + 5 elements take two) and
    # added in order, so the bits are NumPy's on any number of threads.
    rng = np.random.default_rng(2)
    fn = lambda xs: ([np.sum(np.sqrt(np.abs(a)) * 3) for a in xs] + [np.mean(np.exp(a / 100)) for a in xs]
                     + [np.sum(a * 2, dtype=np.float64) for a in xs])
    lengths = [2**17 + 3, 300001] if dtype == np.float16 else [2**17 + 3, 300001, 2**21 + 5]
    xs = [(rng.standard_normal(n) * 10).astype(dtype) for n in lengths]
    want = fn(xs)
    old = npc.get_num_threads()
    try:
        with npc.config.patch(cache_dir=str(tmp_path)):
            for nt in (1, 2, 3):
                npc.set_num_threads(nt)
                npc.compiler.reset()
                got = npc.compile(fn, backend="fused")(xs)
                bad = [(j, g, w) for j, (g, w) in enumerate(zip(got, want)) if not same_bits(g, w)]
                assert not bad, (nt, bad[:3])
    finally:
        npc.set_num_threads(old)


CAST_SUMS = {
    "sum int64 dtype=f8": (lambda a: np.sum(a, dtype=np.float64), np.int64),
    "mean int64": (lambda a: np.mean(a), np.int64),
    "mean of computed ints": (lambda a: np.mean(a * 3 - 1), np.int64),
    "sum f2 dtype=f4": (lambda a: np.sum(a, dtype=np.float32), np.float16),
    "mean f2 dtype=f4": (lambda a: np.mean(a, dtype=np.float32), np.float16),
    "sum int32 dtype=f4": (lambda a: a.sum(dtype=np.float32), np.int32),
    "sum f4 dtype=f8": (lambda a: a.sum(dtype=np.float64), np.float32),
    "astype then sum (one run)": (lambda a: a.astype(np.float64).sum(), np.int64),
}


@pytest.mark.parametrize("name", list(CAST_SUMS))
@pytest.mark.parametrize("n", [9000, 8192, 20000, 100001, 300007])
def test_sums_that_cast_add_numpys_buffer_pieces(name, n, tmp_path):
    # Note [buffered reduction casts] in src/tracer/trace_hooks.cpp: NumPy casts a sum's input
    # through its 8192-element buffer and adds each piece's pairwise sum in turn; a program's
    # own astype is one run.
    fn, dtype = CAST_SUMS[name]
    r = np.random.default_rng(n)
    a = (r.integers(-10**15, 10**15, n) if dtype == np.int64 else r.standard_normal(n) * 1000).astype(dtype)
    want = fn(a)
    old = npc.get_num_threads()
    try:
        with npc.config.patch(cache_dir=str(tmp_path)):
            for nt in (1, 2):
                npc.set_num_threads(nt)
                npc.compiler.reset()
                got = npc.compile(fn, backend="fused")(a)
                assert same_bits(got, want), (nt, got, want)
    finally:
        npc.set_num_threads(old)


@pytest.mark.parametrize("axis", [None, 1])
def test_row_and_whole_sums_that_cast(axis, tmp_path):
    r = np.random.default_rng(5)
    for shape in [(3, 20000), (40, 700)]:
        a = r.integers(-10**15, 10**15, shape)
        fn = lambda a: (a.sum(axis=axis, dtype=np.float64), a.mean(axis=axis))  # noqa: E731
        with npc.config.patch(cache_dir=str(tmp_path)):
            npc.compiler.reset()
            got = npc.compile(fn, backend="fused")(a)
        for g, w in zip(got, fn(a)):
            assert same_bits(g, w), (shape, g, w)


def test_a_cast_overflow_in_a_sum_is_named_reduce():
    a = np.array([70000, 1, 2])
    fn = lambda a: np.sum(a, dtype=np.float16)  # noqa: E731
    with pytest.warns(RuntimeWarning, match="overflow encountered in reduce"):
        want = fn(a)
    with pytest.warns(RuntimeWarning, match="overflow encountered in reduce"):
        got = npc.compile(fn, backend="fused")(a)
    assert same_bits(got, want)

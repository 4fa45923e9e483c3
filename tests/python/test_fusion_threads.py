"""Threads of fused kernels (Note [threads of kernels] in src/fusion/emit_cpp.cpp): a parallel
loop asks npc's rule at launch (npc.set_num_threads, npc.set_parallel_threshold) and runs on
the calling thread when one thread does it. Both ways give NumPy's values and warnings."""
import warnings

import numpy as np
import pytest

import npc
from _fused_source import compiled_source_and_result


@pytest.fixture
def threshold():
    """Sets npc's parallel threshold for one test (1: every parallel loop uses the thread pool)."""
    old = npc.get_parallel_threshold()
    yield npc.set_parallel_threshold
    npc.set_parallel_threshold(old)


def _relax(d, k):
    return np.minimum(d, d[:, k, None] + d[None, k, :])


def _chain(a, b):
    return np.sin(a) * b + np.sqrt(b)


def _row_sums(a):
    return (a * 2).sum(axis=1)


def _total(a):
    return np.sum(a * a)


CASES = [
    (_relax, lambda r: (r.random((70, 70)), 3)),
    (_chain, lambda r: (r.standard_normal(5000), r.standard_normal(5000))),  # sqrt of negatives warns
    (_row_sums, lambda r: (r.random((300, 40)),)),
    (_total, lambda r: (r.random(100_000),)),
]


def _run(fn, args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(x.category, str(x.message)) for x in w]


@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("limit", [1, 1 << 40], ids=["team", "calling-thread"])
def test_both_ways_give_numpy_results(fn, make, limit, threshold):
    args = make(np.random.default_rng(0))
    want, want_w = _run(fn, args)
    threshold(limit)
    f = npc.compile(fn, backend="fused")
    for _ in range(2):  # trace, replay
        got, got_w = _run(f, args)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
        assert np.asarray(got).dtype == want.dtype
        assert got_w == want_w


def test_one_thread_setting_holds(threshold):
    """npc.set_num_threads(1) and a threshold of 1: the loops still give NumPy's results."""
    old = npc.get_num_threads()
    threshold(1)
    npc.set_num_threads(1)
    try:
        r = np.random.default_rng(1)
        for fn, make in CASES:
            args = make(r)
            got, _ = _run(npc.compile(fn, backend="fused"), args)
            want, _ = _run(fn, args)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    finally:
        npc.set_num_threads(old)


def test_loop_asks_with_its_work(capfd):
    """A runtime-sized loop asks npc's rule with its elements and the work of one element
    (eager's weights, Note [elementwise cost]: 1 for multiply and add, 2 for sqrt, 8 for sin)."""
    a = np.random.default_rng(2).standard_normal(50_000)
    with np.errstate(invalid="ignore"):
        got, src = compiled_source_and_result(_chain, (a, np.abs(a)), capfd)
    np.testing.assert_allclose(got, _chain(a, np.abs(a)), rtol=1e-12)
    assert "npk::threads_for(" in src, src
    calls = src[src.index("npk::threads_for("):].split(";")[0]
    assert calls.rstrip(") ").endswith(", 12"), calls  # sin 8 + multiply 1 + sqrt 2 + add 1
    assert ") / 8," not in calls, calls  # sin and sqrt cost more than a memory access


def _ring(r, lo, hi):
    return (lo <= r) & (r < hi)


def test_memory_bound_loop_counts_an_eighth(capfd):
    """A loop whose ops all cost one unit (comparisons, bitwise and) counts an eighth of its
    work, as an eager loop of one such op does (Note [memory-bound threads]): the mask of a
    ring, comparisons of float64 as eager weighs them (1 each, not 8)."""
    r = np.random.default_rng(4).random(50_000) * 10
    got, src = compiled_source_and_result(_ring, (r, 2.0, 3.0), capfd)
    np.testing.assert_array_equal(got, _ring(r, 2.0, 3.0))
    calls = src[src.index("npk::threads_for("):].split(";")[0]
    assert ") / 8, 3)" in calls, calls  # less_equal 1 + less 1 + bitwise_and 1


def test_memory_bound_loop_threads(threshold):
    """The eighth still splits a long enough loop: at a threshold of 1 the ring's mask runs on
    the thread pool and gives NumPy's values, as on the calling thread."""
    r = np.random.default_rng(5).random(300_000) * 10
    want = _ring(r, 2.0, 3.0)
    for limit in (1, 1 << 40):
        threshold(limit)
        f = npc.compile(_ring, backend="fused")
        for _ in range(2):
            np.testing.assert_array_equal(f(r, 2.0, 3.0), want)


def test_rows_of_reductions_count_their_elements(capfd):
    """A parallel loop over rows whose body reduces (the reduction loop comes before the store
    of its result) counts the reduced elements too, not only the rows."""
    r = np.random.default_rng(3)
    X, Y = r.random((300, 64)), r.random((300, 64))
    fn = lambda X, Y: np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))  # noqa: E731
    got, src = compiled_source_and_result(fn, (X, Y), capfd)
    np.testing.assert_allclose(got, fn(X, Y), rtol=1e-12)
    call = src[src.index("npk::threads_for("):].split(";")[0]
    assert call.count("std::max<int64_t>(0,") >= 2, call  # the rows times the reduced extent


def test_column_reductions_count_their_reduced_elements(capfd):
    """A lane block of outputs whose body holds the reduction loops (a column std: the mean's
    loop, then the squares' loop) counts those loops' elements, and the block keeps the cost of
    an element: before, a 256 x 256 column std counted 256 elements of cost 1 and stayed on the
    calling thread."""
    a = np.random.default_rng(6).random((256, 256))
    fn = lambda a: np.log1p(a * 2).std(axis=0)  # noqa: E731
    got, src = compiled_source_and_result(fn, (a,), capfd)
    np.testing.assert_allclose(got, fn(a), rtol=1e-12)
    call = src[src.index("npk::threads_for("):].split(";")[0]
    assert call.count("std::max<int64_t>(0,") >= 3, call  # the blocks times both reduced extents
    assert not call.rstrip(") ").endswith(", 1"), call  # log1p's cost is counted


def test_pairwise_sum_chunks_ask_with_their_work(capfd):
    """Note [parallel pairwise sums]: a long pairwise sum to one value asks npc's rule with its
    elements and the cost of one, and sums its chunks on the pool when that says so."""
    a = np.random.default_rng(7).random(300_000)
    fn = lambda a: np.sum(np.sqrt(a) * 3)  # noqa: E731
    got, src = compiled_source_and_result(fn, (a,), capfd)
    assert got == fn(a)  # NumPy's pairwise order, bit for bit
    assert "npk::kPairwiseBatch" in src and "npk::parallel_for(" in src, src[:3000]

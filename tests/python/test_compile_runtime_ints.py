"""Python int arguments of compiled functions (runtime ints, Note [runtime ints] in
python/npc/compiler/_guards.py and src/tracer/trace_nodes.cpp): an int is guarded by value on its
first trace; when a later call brings another value it becomes a runtime scalar, and a graph
replays for every value of its range class. Every call gives what NumPy gives with that Python
int (values, dtypes, warnings, OverflowError); uses that need the value make it static again."""
import math
import warnings

import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, assert_same_as_numpy, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-runtime-ints")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def traces():
    return compiler.stats()["traces"]


def w_index(a, k):
    a[0] = k
    return a * 1


def w_fill(a, k):
    a.fill(k)
    return a * 1


def w_branch(a, k):
    if k > 2:
        return a + k
    return a - k


def w_loop(a, k):
    r = a * 0
    for i in range(k):
        r = r + a * i
    return r


# Each program is called with values that change between calls: runtime uses and static
# uses (which must make the argument static) alike.
PROGRAMS = [
    lambda a, k: a * k + 1,
    lambda a, k: k - a,
    lambda a, k: a // k,
    lambda a, k: a % k,
    lambda a, k: a ** k,
    lambda a, k: np.maximum(a, k),
    lambda a, k: np.where(a > 1, k, a),
    lambda a, k: (a < k, a == k, k >= a),
    lambda a, k: np.add(a, k, dtype=np.float32),
    lambda a, k: (a + 1, k),
    lambda a, k: (a + 1, [k, 2]),
    lambda a, k: a[:k],
    lambda a, k: a[k % 3],
    lambda a, k: a + np.zeros(k + 3)[:4],
    lambda a, k: np.full(3, k) + a[:3],
    lambda a, k: np.arange(k + 4)[:4] * a,
    lambda a, k: a * int(k),
    lambda a, k: a * float(k),
    lambda a, k: a * (k * 2),
    lambda a, k: a * math.sqrt(abs(k)),
    lambda a, k: a * np.cos(k),
    lambda a, k: a * np.int64(k),
    lambda a, k: a + np.asarray(k),
    lambda a, k: a * k.bit_length(),
    lambda a, k: a * (k if isinstance(k, int) else 0),
    lambda a, k: a * len(str(k)),
    lambda a, k: a * (k if type(k) is int else 0),
    lambda a, k: a + 1,
    lambda a, k: a * {3: 1, 5: 2}.get(k, 7),
    lambda a, k: np.clip(a, 0, k),
    lambda a, k: a.reshape(2, 2) * k,
    lambda a, k: (a * k).sum(),
    w_index, w_fill, w_branch, w_loop,
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("p", range(len(PROGRAMS)))
def test_int_argument_is_the_python_int(p, backend):
    f = PROGRAMS[p]
    a = np.arange(4.0)
    check(f, (a, 3), (a, 3), (a, 5), (a * 2, -2), (a, 7), (a, 1), (a + 1, 5), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("p", range(len(PROGRAMS)))
def test_int_argument_int_arrays(p, backend):
    f = PROGRAMS[p]
    a = np.arange(4, dtype=np.int16)
    check(f, (a, 3), (a, 5), (a, -2), (a, 7), (a, 1), (a, 0), (a - 7, 5), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_arithmetic_stays_at_two_traces(backend):
    f = lambda a, k: a * k + 1  # noqa: E731
    a = np.arange(5.0)
    cf = check(f, *[(a, k) for k in range(1, 20)], backend=backend)
    assert traces() == 2
    assert compiler.stats()["eager_runs"] == 0
    assert cf._dyn_ints == {1}


@pytest.mark.parametrize("backend", BACKENDS)
def test_many_uses_stay_at_two_traces(backend):
    def f(a, b, k):
        c = np.where(a > k, a - k, b * k)
        return c // k, c < k, np.minimum(b, k) ** 2, k - a
    a = np.arange(6, dtype=np.int32)
    b = np.arange(6.0)
    check(f, *[(a, b, k) for k in range(1, 30)], backend=backend)
    assert traces() == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_static_uses_fall_back_to_guards(backend):
    a = np.arange(6.0)
    for f in (w_loop, lambda a, k: a[:k], lambda a, k: np.zeros(k) + a[:k]):
        compiler.reset()
        cf = check(f, *[(a, k) for k in (1, 2, 3, 2, 4, 1)], backend=backend)
        assert cf._static_ints == {1} and not cf._dyn_ints
        # Static again: each new value traces, a known one replays.
        assert traces() == 4  # 1, 2 (its runtime trace aborted, uncounted; then static), 3, 4
        assert compiler.stats()["eager_runs"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_ints_one_static(backend):
    def f(a, n, k):
        return a[:n] * k
    a = np.arange(6.0)
    cf = check(f, (a, 3, 1), (a, 3, 2), (a, 3, 3), (a, 4, 4), (a, 4, 5), (a, 3, 6), backend=backend)
    assert cf._dyn_ints == {2} and cf._static_ints == {1}


@pytest.mark.parametrize("backend", BACKENDS)
def test_bools_are_never_runtime(backend):
    f = lambda a, k: a * k  # noqa: E731
    a = np.arange(4.0)
    cf = check(f, (a, True), (a, False), (a, True), backend=backend)
    assert not cf._dyn_ints and traces() == 2
    cf = check(f, (a, 1), (a, True), (a, 2), (a, False), (a, 3), backend=backend)
    assert cf._dyn_ints == {1}


@pytest.mark.parametrize("backend", BACKENDS)
def test_ints_in_containers_and_keywords(backend):
    def f(a, ks, k=1):
        return a * ks[0] + ks[1]["s"] - k
    a = np.arange(4.0)
    compiler.reset()
    cf = npc.compile(f, backend=backend)
    for i in range(1, 8):
        args = (a, [i, {"s": 2 * i}])
        assert_same_as_numpy(lambda *x: cf(*x, k=i + 1), lambda *x: f(*x, k=i + 1), *args)
    assert traces() == 2
    assert cf._dyn_ints == {"1[0]", "1[1]['s']", "k"}


def test_dynamic_false_and_true():
    f = lambda a, k: a * k  # noqa: E731
    a = np.arange(4.0)
    check(f, *[(a, k) for k in range(1, 6)], backend="eager", dynamic=False)
    assert traces() == 5
    cf = check(f, *[(a, k) for k in range(1, 6)], backend="eager", dynamic=True)
    assert traces() == 1 and cf._dyn_ints == {1}


def test_explain_names_runtime_ints():
    cf = npc.compile(lambda a, n, k: a[:n] * k, backend="eager")
    a = np.arange(6.0)
    for n, k in ((3, 1), (4, 2), (3, 3)):
        cf(a, n, k)
    e = npc.explain(cf)(a, 3, 9)
    assert e.runtime_ints == ["arg 2"]
    text = str(e)
    assert "Runtime ints: arg 2" in text
    assert f"arg 2: int in [0, {2**63 - 1}] (runtime scalar)" in text
    assert "arg 1: == 3" in text
    assert "scalar[0] : int64()" in text


VALUES = [1, 2, -1, 0, 127, 128, -128, -129, 255, 256, 32767, 32768, 65519, 65520, 70000, -70000, 2**31,
          -2**31 - 1, 2**32, 2**53 + 1, 2**60 + 2**36 + 1, 2**63 - 1, -2**63, 2**63, 2**64 - 1, 2**64, -2**63 - 1,
          3, 5]

OPS = [
    lambda a, k: a + k,
    lambda a, k: k * a,
    lambda a, k: a < k,
    lambda a, k: k == a,
]


@pytest.mark.parametrize("op", range(len(OPS)))
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool",
                                   "float16", "float32", "float64", "complex64"])
def test_nep50_edges_eager(dtype, op):
    # Every value against NumPy: the loop dtype, OverflowError (its message), the exact
    # answers of comparisons with out-of-range values, float16's overflow warning, float32's
    # rounding of big ints.
    a = (np.arange(4) % 2 + 1).astype(dtype)
    check(OPS[op], *[(a, v) for v in VALUES], backend="eager")


@pytest.mark.parametrize("op", range(len(OPS)))
@pytest.mark.parametrize("dtype", ["int8", "uint8", "uint64", "bool", "float16", "float32"])
def test_nep50_edges_fused(dtype, op):
    a = (np.arange(4) % 2 + 1).astype(dtype)
    check(OPS[op], *[(a, v) for v in VALUES], backend="fused")


@pytest.mark.parametrize("backend", BACKENDS)
def test_overflow_error_keeps_the_int_runtime(backend):
    f = lambda a, k: a * k  # noqa: E731
    a = np.arange(4, dtype=np.int8)
    cf = check(f, (a, 1), (a, 2), (a, 300), (a, -200), (a, 3), (a, 100), (a, -5), backend=backend)
    assert cf._dyn_ints == {1}
    n = traces()
    check_more = [(a, v) for v in (7, -7, 127, 300, 9)]
    for args in check_more:
        assert_same_as_numpy(cf, f, *args)
    assert traces() == n + 1  # 300 again: its trace raises (nothing cached); the others replay


@pytest.mark.parametrize("backend", BACKENDS)
def test_warnings_of_runtime_ints(backend):
    a16 = np.ones(3, np.float16)
    check(lambda a, k: a * k, (a16, 2), (a16, 3), (a16, 70000), (a16, 80000), (a16, 4), backend=backend)
    ai = np.arange(3)
    check(lambda a, k: a // k, (ai, 2), (ai, 3), (ai, 0), (ai, 5), (ai, 0), backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(lambda a, k: a.astype(np.float64) / k, (ai, 2), (ai, 3), (ai, 4), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_runtime_int_with_runtime_float(backend):
    f = lambda a, k, s: a * k + s  # noqa: E731
    a = np.arange(4.0)
    check(f, *[(a, k, k / 4) for k in range(1, 8)], backend=backend)
    assert traces() == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_power_with_negative_runtime_int(backend):
    a = np.arange(1, 4)
    check(lambda a, k: a ** k, (a, 2), (a, 3), (a, -1), (a, 4), (a, -2), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_shifts_and_bitwise(backend):
    a = np.arange(4, dtype=np.uint8)
    check(lambda a, k: (a << k, a >> k, a & k, a | k, a ^ k), *[(a, k) for k in (1, 2, 3, 7, 8, 9, 200, 255)],
          backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_runtime_int_in_a_cut_trace(backend):
    # Note [loops]: segments cut at the node budget declare the runtime int in each one.
    def f(a, k):
        r = a
        for i in range(30):
            r = (r * k + i) % 1000
        return r
    a = np.arange(8)
    with npc.config.patch(segment_nodes=40):
        check(f, *[(a, k) for k in range(1, 8)], backend=backend)
    assert traces() == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_graph_breaks_keep_ints_static(backend):
    def f(a, k):
        s = float(a.sum())  # a graph break
        return a * k + s
    a = np.arange(4.0)
    cf = check(f, *[(a, k) for k in range(1, 6)], backend=backend)
    assert cf._static_ints == {1}


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_warnings_of_a_trace_retraced_for_an_unused_int_are_shown_once(backend):
    # The int varies but no traced operation takes it: the trace is done again with it static,
    # and the Python-level warning of the tracing call is shown once, as NumPy shows it.
    def f(a, k):
        return a.astype(np.uint8)
    cf = npc.compile(f, backend=backend)
    a = np.array([1 + 0j], np.complex64)
    for k in (-3, 1, 5):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            r = cf(a, k)
        with warnings.catch_warnings(record=True) as want:
            warnings.simplefilter("always")
            e = f(a, k)
        np.testing.assert_array_equal(r, e)
        assert [(w.category, str(w.message)) for w in got] == [(w.category, str(w.message)) for w in want]

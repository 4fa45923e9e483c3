"""Floating-point warnings of compiled calls equal NumPy's exactly: one warning per op that
raised, in NumPy's order (ops in program order, divide/overflow/underflow/invalid within an
op), the same list on the tracing call and on replays; under errstate "raise" the error of
the first op that raised. The same for the eager backend (the interpreter) and for a fused
graph's eager fallback. Results are those of the kernels (the attribution run only names).
"""
import os
import warnings

import numpy as np
import pytest

import npc


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-fpwarn")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


X = np.array([1.0, 0.0, 2.0, -1.0, 3.0])
Y = np.array([1.0, 0.0, 2.0, 3.0, 4.0])
BIG = np.full(64, 1e300)
I = np.array([7, 0, -3, 5, 9], dtype=np.int64)


def _written(a):
    b = a.copy()
    b[1:] = np.log(a[1:]) * 2  # log(0) and log(-1) inside the written region
    return b


def _inplace(a):
    a[:3] = 1.0 / a[:3]  # a write-back into the caller's array
    return a.sum()


CASES = [
    ("log-then-divide", lambda x, y: np.log(x) + 1 / y, (X, Y)),
    ("two-ops-one-kind", lambda a: a / 0.0 + np.sqrt(-a), (X,)),
    ("cast-after-multiply", lambda a: (a * 1e300).astype(np.float32), (X,)),
    ("overflow-twice", lambda a: a * 1e308 * 10.0, (X,)),
    ("reduce-overflow", lambda a: np.sum(a * 10.0) + np.exp(a).sum(), (BIG,)),
    ("int-divide-by-zero", lambda i, y: i // (i * 0) + np.log(y), (I, Y)),
    ("written-region", _written, (X,)),
    ("matmul-overflow", lambda a: (a.reshape(8, 8) @ a.reshape(8, 8)) - np.log(a[:8] * 0).sum(), (BIG,)),
]


def record(fn, args, **state):
    with warnings.catch_warnings(record=True) as w, np.errstate(**state):
        warnings.simplefilter("always")
        try:
            out, exc = fn(*args), None
        except FloatingPointError as e:
            out, exc = None, str(e)
    return [(type(m.message).__name__, str(m.message)) for m in w], exc, out


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("fn,args", [pytest.param(f, a, id=i) for i, f, a in CASES])
def test_warnings_equal_numpys(fn, args, backend):
    want_w, want_e, want = record(fn, [a.copy() for a in args], all="warn")
    assert want_w, "NumPy warns for this case"
    f = npc.compile(fn, backend=backend)
    for _ in range(2):
        s0 = npc._fusion.stats()
        got_w, got_e, got = record(f, [a.copy() for a in args], all="warn")
        s1 = npc._fusion.stats()
        assert got_w == want_w
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        if backend == "fused":
            assert s1["fallbacks"] == s0["fallbacks"] and s1["kernel_runs"] > s0["kernel_runs"]


@pytest.mark.parametrize("fn,args", [pytest.param(f, a, id=i) for i, f, a in CASES])
def test_raise_names_the_first_op_that_raised(fn, args):
    _, want_e, _ = record(fn, [a.copy() for a in args], all="raise")
    f = npc.compile(fn, backend="fused")
    for _ in range(2):
        _, got_e, _ = record(f, [a.copy() for a in args], all="raise")
        assert got_e == want_e


def test_write_back_happens_once_and_results_are_the_kernels():
    a = np.array([2.0, 0.0, 4.0, 5.0])
    want_a = a.copy()
    with np.errstate(all="ignore"):
        want = _inplace(want_a)
    f = npc.compile(_inplace, backend="fused")
    got_a = a.copy()
    w, _, got = record(f, [got_a], all="warn")
    assert w == [("RuntimeWarning", "divide by zero encountered in divide")]
    np.testing.assert_array_equal(got_a, want_a)  # written once, by the kernels
    assert got == want


def test_eager_fallback_reports_per_op():
    """A graph the fused backend cannot lower runs on the interpreter, which reports too."""
    def fn(x):
        y = np.log(x) * 2
        y.reshape(-1)[::2] = 0  # a write through a reshape: not lowered (eager fallback)
        return y / x

    a = np.array([[1.0, 0.0, 3.0], [-1.0, 2.0, 0.0]])
    want_w, _, want = record(fn, (a,), all="warn")
    with npc.config.patch(codegen_errors="warn"):
        f = npc.compile(fn, backend="fused")
        for _ in range(2):
            s0 = npc._fusion.stats()
            got_w, _, got = record(f, (a,), all="warn")
            s1 = npc._fusion.stats()
            assert got_w == want_w
            np.testing.assert_array_equal(got, want)
            assert s1["fallbacks"] == s0["fallbacks"] + 1  # the interpreter ran it

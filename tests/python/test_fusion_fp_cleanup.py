"""A floating-point error raised inside a compiled call (errstate "raise", a warning filter
that raises) leaves no traced state behind: no active trace, no pending error flags, no
patched NumPy functions, so later code in the same process runs as usual. Also: several
threads tracing at once restore NumPy's functions when the last one finishes.
"""
import builtins
import threading
import time
import warnings

import numpy as np
import pytest

import npc
from npc import _core

ORIGINALS = {"numpy.zeros": (np, "zeros"), "numpy.random.default_rng": (np.random, "default_rng"),
             "numpy.random.standard_normal": (np.random, "standard_normal"), "npc.zeros": (npc, "zeros"),
             "print": (builtins, "print")}
SAVED = {k: getattr(m, n) for k, (m, n) in ORIGINALS.items()}


@pytest.fixture(autouse=True)
def _raise_and_private_cache(tmp_path_factory):
    import os
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-fpclean")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


def assert_clean():
    """Nothing of a trace is left on this thread or in NumPy's namespace."""
    assert not _core._is_tracing()
    for k, (m, n) in ORIGINALS.items():
        assert getattr(m, n) is SAVED[k], f"{k} is still patched"
    # Plain NumPy and eager npc code run as usual.
    rng = np.random.default_rng(7)
    assert isinstance(rng.standard_normal((4, 6)) > 0, np.ndarray)
    assert np.zeros(3).sum() == 0.0
    np.testing.assert_array_equal(np.asarray(npc.asarray(np.ones(3)) + 1), np.full(3, 2.0))
    # No error flag is left pending: a clean compiled call under "raise" raises nothing.
    f = npc.compile(lambda a: a * 2.0 + 1.0, backend="fused")
    with np.errstate(all="raise"):
        np.testing.assert_array_equal(f(np.arange(5.0)), np.arange(5.0) * 2.0 + 1.0)


A = np.array([1.0, 0.0, -1.0, 2.0])


@pytest.mark.parametrize("call", ["trace", "replay"])
def test_raise_in_compiled_call_leaves_nothing(call):
    f = npc.compile(lambda a: np.log(a) + 1.0 / a, backend="fused")
    if call == "replay":
        with np.errstate(all="ignore"):
            f(A)
    with np.errstate(all="raise"), pytest.raises(FloatingPointError, match="divide by zero encountered"):
        f(A)
    assert_clean()


def test_warning_filter_error_leaves_nothing():
    f = npc.compile(lambda a: 1.0 / a, backend="fused")
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="divide by zero encountered in divide"):
            f(A)
    assert_clean()


def test_raise_at_graph_break_stops_the_function_there():
    """NumPy raises at the op; a compiled function raises at its next graph break (where the
    segment holding the op runs), so Python code after the break does not run either."""
    after = []

    def fn(a):
        b = 1.0 / a
        s = float(b[0])  # a concrete value: graph break, the segment with the divide runs
        after.append(s)
        return b * s

    with np.errstate(all="raise"), pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
        fn(A)
    assert after == []
    f = npc.compile(fn, backend="fused")
    for _ in range(2):
        with np.errstate(all="raise"), pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
            f(A)
        assert after == []
        assert_clean()
    with np.errstate(all="ignore"):
        got = f(A)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, fn(A))


def test_flags_of_a_failed_trace_are_not_reported_later():
    """Errors raised by a segment of a call that then failed are not reported by a later call."""
    def fn(a):
        b = 1.0 / a
        float(b[0])  # graph break: the divide by zero runs here (ignored below)
        raise KeyError("user error after the break")

    f = npc.compile(fn, backend="fused")
    with np.errstate(all="ignore"), pytest.raises(KeyError):
        f(A)
    assert_clean()


def test_concurrent_traces_restore_numpy():
    """Threads tracing at the same time (one of them raising) leave NumPy's functions unpatched."""
    for trial in range(3):
        def fn(a, b):
            c = np.sqrt(a) / b + np.zeros(a.shape)
            time.sleep(0.02)  # while tracing only: the threads' traces overlap
            return c + a * b

        f = npc.compile(fn, backend="fused")
        barrier = threading.Barrier(6)
        errors = {}

        def work(i):
            a, b = np.linspace(1.0, 2.0, 1000), np.linspace(1.0, 2.0, 1000)
            if i == 3:
                b[10] = 0.0
            try:
                barrier.wait()
                for _ in range(5):
                    with np.errstate(divide="raise"):
                        f(a, b)
            except FloatingPointError as e:
                errors[i] = e

        threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert set(errors) == {3}
        assert_clean()

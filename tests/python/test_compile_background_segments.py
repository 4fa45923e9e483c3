"""Steps of a cut trace run in the background while tracing goes on (Note [segments in the
background] in src/tracer/trace_segments.cpp): values, errors, warnings and writes into the
arguments stay NumPy's, on the tracing call and on replays, also where the trace needs a
value, breaks, or ends with an exception. Both backends against NumPy."""
import warnings

import numpy as np
import pytest

import npc
from npc import _core, compiler

from _compile_diff import BACKENDS, assert_same_as_numpy, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-background-segments")
    prev = _core._background_segments(1)  # as NPC_BACKGROUND_SEGMENTS=1 does
    try:
        with npc.config.patch(codegen_errors="raise", cache_dir=cache, segment_nodes=20):
            compiler.reset()
            yield
            compiler.reset()
    finally:
        _core._background_segments(prev)


def rows(a):
    a = a.copy()
    for i in range(1, a.shape[0]):
        a[i] = (a[i] + a[i - 1]) / 3.0
        for j in range(1, a.shape[1]):
            a[i, j] = a[i, j] + a[i, j - 1] * 0.5
    return a


def in_place(a, b):
    for i in range(1, a.shape[0]):
        a[i] += a[i - 1] * b[i]
    return b * 2.0


def log_loop(x):
    for _ in range(30):
        x = np.log(x) + 1.0
    return x


def reads_values(a):
    a = a.copy()
    total = 0.0
    for i in range(1, a.shape[0]):
        a[i] = a[i] * 0.5 + a[i - 1]
        if i % 7 == 0:
            total += float(a[i].sum())  # a value: the steps before it must have run
    return a, total


def raises_late(a):
    for i in range(1, a.shape[0]):
        a[i] = a[i] + a[i - 1]
    raise ValueError("late")


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_loop_values_and_replays(backend):
    rng = np.random.default_rng(0)
    cf = check(rows, (rng.random((9, 7)),), (rng.random((9, 7)),), backend=backend)
    assert cf.last_cuts > 2  # several steps: the case this file is about


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_into_arguments(backend):
    rng = np.random.default_rng(1)
    check(in_place, (rng.random((40, 3)), rng.random((40, 1))), (rng.random((40, 3)), rng.random((40, 1))),
          backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_warnings_of_steps(backend):
    check(log_loop, (np.array([0.5, 2.0]),), (np.array([3.0, 4.0]),), (np.array([-1.0, 4.0]),), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_error_of_a_step_under_errstate_raise(backend):
    cf = npc.compile(log_loop, backend=backend)
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError) as got:
            cf(np.array([0.5, 2.0]))
        with pytest.raises(FloatingPointError) as want:
            log_loop(np.array([0.5, 2.0]))
    assert str(got.value) == str(want.value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(cf(np.array([3.0, 4.0])), log_loop(np.array([3.0, 4.0])))


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_needed_while_tracing(backend):
    rng = np.random.default_rng(2)
    check(reads_values, (rng.random((30, 4)),), (rng.random((30, 4)),), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_exception_after_steps(backend):
    rng = np.random.default_rng(3)
    cf = npc.compile(raises_late, backend=backend)
    for _ in range(2):
        assert_same_as_numpy(cf, raises_late, rng.random((40, 3)))

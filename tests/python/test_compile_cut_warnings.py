"""Warnings of a trace cut into segments at the node budget (Note [loops] in
src/tracer/trace_segments.cpp): the segments that ran while tracing report their
floating-point errors on the tracing call, and a replay reports those of its own values
only; Python-level warnings raised while tracing are shown on every replay (Note [warnings
of traced Python] in python/npc/compiler/_capture.py). Both backends against NumPy."""
import warnings

import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-cut-warnings")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache, segment_nodes=5):
        compiler.reset()
        yield
        compiler.reset()


def sqrt_loop(x):
    for _ in range(10):
        x = np.sqrt(x) + 1.0
    return x


def complex_loop(z):
    x = z.astype(np.float64)  # ComplexWarning, raised by the Python while tracing
    for _ in range(6):
        x = np.log(x) + 2.0
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_trace_warns_replays_with_clean_values_do_not(backend):
    cf = check(sqrt_loop, (np.array([-1.0]),), (np.array([4.0]),), (np.array([9.0]),), (np.array([-2.0]),),
               backend=backend)
    assert cf.last_cuts > 0  # the trace was cut: the case this file is about


@pytest.mark.parametrize("backend", BACKENDS)
def test_clean_trace_replay_warns_for_its_values(backend):
    check(sqrt_loop, (np.array([4.0]),), (np.array([-1.0]),), (np.array([4.0]),), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_clean_replay_under_warnings_as_errors(backend):
    cf = npc.compile(sqrt_loop, backend=backend)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cf(np.array([-1.0]))
    assert [str(m.message) for m in w] == ["invalid value encountered in sqrt"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(cf(np.array([4.0])), sqrt_loop(np.array([4.0])))
    with np.errstate(invalid="raise"):
        np.testing.assert_array_equal(cf(np.array([4.0])), sqrt_loop(np.array([4.0])))
        with pytest.raises(FloatingPointError, match="invalid value encountered in sqrt"):
            cf(np.array([-1.0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_warnings_of_a_cut_trace_replay(backend):
    z = np.array([1 + 2j, 3 - 1j])
    check(complex_loop, (z,), (z,), (np.array([-1 + 0j, 2 + 0j]),), backend=backend)

"""Floating-point errors of a segment that runs at a graph break inside an op that released
the GIL are reported with the GIL held (report_compiled_fp in python/npc/csrc/bind_tracer.cpp):
the process used to crash on the second size."""
import warnings

import numpy as np
import pytest

import npc


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_warning_of_a_dead_op_before_a_break_at_new_sizes(backend):
    def f(a0):
        v3 = np.reciprocal(a0)  # noqa: F841 - divides by zero: a warning at the break
        bool(int(a0.argmax()) == 0)
        return a0 + 1

    cf = npc.compile(f, backend=backend)
    for n in (5, 6, 7, 8):
        x = np.arange(n, dtype=np.uint16) % 3
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            r = cf(x)
        with warnings.catch_warnings(record=True) as want:
            warnings.simplefilter("always")
            w = f(x)
        np.testing.assert_array_equal(np.asarray(r), w)
        assert {str(m.message) for m in want} <= {str(m.message) for m in got}


def _array_of_max(x):
    return np.array([(x / 0).max()])


def _array_of_two(x):
    return np.array([(x * np.float32(1e30)).max(), x.min()])


def _loop_of_maxima(x):
    out = []
    for _ in range(3):
        x = x * np.float32(1e20)
        out.append(x.max())
    return np.array(out)


def _caught_then_again(x):
    v = (x / 0).max()
    try:
        float(v)
    except FloatingPointError:
        pass
    return float(v)


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("f", [_array_of_max, _array_of_two, _loop_of_maxima, _caught_then_again])
def test_value_whose_segment_raised_raises_again(backend, f):
    # Note [failed segments] in src/tracer/trace_segments.cpp: NumPy's np.array([v]) asks v
    # for its value twice (buffer protocol, then __array_interface__); the second request
    # crashed the process once the first had raised.
    x = np.arange(1, 6, dtype=np.float32) * np.float32(1e10)
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError) as want:
            f(x)
        cf = npc.compile(f, backend=backend)
        for _ in range(2):
            with pytest.raises(FloatingPointError) as got:
                cf(x)
            assert str(got.value) == str(want.value)

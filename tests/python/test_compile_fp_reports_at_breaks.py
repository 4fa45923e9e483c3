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

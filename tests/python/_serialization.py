"""Helpers of the serialization tests (test_graph_serialization.py, test_plan_serialization.py):
running a compiled graph or plan on copies of its inputs, and comparing arrays bit for bit."""
import warnings

import numpy as np

import npc


def run_on_copies(compiled, inputs, scalars):
    """`compiled(arrays, scalars)` on npc copies of `inputs`: (outputs, inputs after the run)
    as NumPy arrays, or (exception type, message) when it raises."""
    arrays = [npc.asarray(a.copy()) for a in inputs]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            outs = compiled(arrays, scalars)
    except Exception as e:  # noqa: BLE001 - a copy must raise what the original raises
        return type(e), str(e)
    return [np.asarray(o) for o in outs], [np.asarray(a) for a in arrays]


def assert_bitwise_equal(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()

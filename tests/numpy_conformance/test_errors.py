"""Bad input raises what NumPy raises (same exception type), never crashes."""
import numpy as np
import pytest

import npc

CASES = [
    ("ragged", lambda m: m.array([[1, 2], [3]])),
    ("ragged_deep", lambda m: m.array([[[1], [2, 3]]])),
    ("negative_dim", lambda m: m.zeros((2, -1))),
    ("negative_dim_empty", lambda m: m.empty(-3)),
    ("unknown_dtype", lambda m: m.zeros(3, dtype="float99")),
    ("bad_dtype_object", lambda m: m.ones(3, dtype=object())),
    ("float_shape", lambda m: m.zeros(2.5)),
    ("str_shape", lambda m: m.zeros("3")),
    ("too_big", lambda m: m.empty((2 ** 40, 2 ** 40))),
    ("cannot_allocate", lambda m: m.empty(2 ** 60, dtype=np.uint8)),
    ("overflow_full", lambda m: m.full(3, 300, dtype=np.int8)),
    ("overflow_full_neg", lambda m: m.full(3, -1, dtype=np.uint64)),
    ("overflow_array", lambda m: m.array(300, dtype=np.int8)),
    ("overflow_array_list", lambda m: m.array([1, 2 ** 70], dtype=np.int64)),
    ("bad_order", lambda m: m.zeros(3, order="X")),
    ("bad_casting", lambda m: m.ones(3).astype(np.int32, casting="safe")),
    ("bad_casting_name", lambda m: m.ones(3).astype(np.int32, casting="bogus")),
    ("reshape", lambda m: m.ones(6).reshape(4, 2)),
    ("view_size", lambda m: m.ones(3, dtype=np.int8).view(np.int16)),
    ("eye_negative", lambda m: m.eye(-1)),
    ("linspace_negative", lambda m: m.linspace(0, 1, -2)),
    ("arange_zero_step", lambda m: m.arange(0, 5, 0)),
    ("arange_nan", lambda m: m.arange(np.nan)),
    ("arange_inf", lambda m: m.arange(np.inf)),
    ("promote_bad", lambda m: m.promote_types("f8", "nope")),
    ("result_type_empty", lambda m: m.result_type()),
    ("item_oob", lambda m: m.ones(3).item(3)),
    ("item_size", lambda m: m.ones(3).item()),
    ("bool_ambiguous", lambda m: bool(m.ones(3))),
    ("int_of_array", lambda m: int(m.ones(3))),
    ("len_0d", lambda m: len(m.array(1))),
    ("iter_0d", lambda m: iter(m.array(1))),
    ("transpose_axes", lambda m: m.ones((2, 3)).transpose(0, 0)),
    ("transpose_range", lambda m: m.ones((2, 3)).transpose(0, 2)),
    ("writeable", lambda m: setattr(m.ones(2).T, "flags", None)),
    ("readonly_fill", lambda m: m.frombuffer(b"abcd", dtype=np.uint8).fill(0)),
]


def outcome(fn, lib):
    try:
        r = fn(lib)
    except Exception as exc:  # noqa: BLE001 - we compare exception types with NumPy's
        return type(exc)
    return type(None) if r is None else "ok"


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_same_exception_as_numpy(name, fn):
    expected = outcome(fn, np)
    actual = outcome(fn, npc)
    if isinstance(expected, type) and issubclass(expected, Exception):
        assert isinstance(actual, type) and issubclass(actual, expected), (name, actual, expected)
    else:
        assert actual == expected, (name, actual, expected)

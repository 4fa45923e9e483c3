"""A sequence assigned through a basic index whose conversion fails part way leaves what
NumPy leaves: NumPy converts a sequence of the destination's shape element by element into
the destination (`a[:] = [1, 2, 300]` into uint8 keeps 1 and 2 when 300 raises
OverflowError), while a sequence that broadcasts, and any advanced index, store nothing.
Eager npc and compiled code (both backends, tracing call and replays) match it.
"""
import os
import warnings

import numpy as np
import pytest

import npc


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-partial")
    with npc.config.patch(cache_dir=cache):
        yield


S = slice(None)
CASES = [
    # (id, shape, dtype, key, value)
    ("uint8", (5,), "uint8", S, [1, 2, 300, 4, 5]),
    ("int8-negative", (5,), "int8", S, [1, -200, 3, 4, 5]),
    ("int8-2d-nested", (2, 3), "int8", S, [[1, 2, 3], [4, 500, 6]]),
    ("uint8-minus-one", (5,), "uint8", S, [1, 2, -1, 4, 5]),
    ("uint8-float-element", (5,), "uint8", S, [1, 2.5, 300, 4, 5]),
    ("int64-huge", (3,), "int64", S, [1, 2**70, 3]),
    ("uint64-negative", (3,), "uint64", S, [1, -1, 3]),
    ("slice", (6,), "uint8", slice(1, 5), [1, 2, 300, 4]),
    ("step", (6,), "uint8", slice(None, None, 2), [1, 300, 4]),
    ("reversed", (3,), "uint8", slice(None, None, -1), [1, 300, 4]),
    ("row", (2, 3), "uint8", 1, [1, 300, 4]),
    ("column", (3, 2), "uint8", (S, 0), [1, 300, 4]),
    ("ellipsis", (3,), "uint8", Ellipsis, [1, 300, 4]),
    ("newaxis", (3,), "uint8", (None, S), [[1, 300, 4]]),
    ("tuple", (2, 2), "uint16", S, ((1, 2), (70000, 4))),
    ("3d", (2, 2, 2), "int8", S, [[[1, 2], [3, 4]], [[5, 200], [7, 8]]]),
    ("first-fails", (3,), "uint8", S, [300, 1, 4]),
    ("none-into-int", (3,), "int32", S, [1, None, 4]),
    ("string-into-float", (3,), "float64", S, [1.5, "2.5", "x"]),
    ("string-into-complex", (3,), "complex128", S, [1j, "x", 4]),
    ("nan-into-int", (3,), "int8", S, [1, float("nan"), 4]),
    ("inf-into-int", (3,), "int8", S, [1, float("inf"), 4]),
    # Nothing stored: the sequence broadcasts, has another length, or the index is advanced.
    ("broadcast-rows", (2, 3), "uint8", S, [1, 300, 4]),
    ("broadcast-column", (3, 2), "uint8", S, [[1], [300], [4]]),
    ("wrong-length", (3,), "uint8", S, [1, 300]),
    ("fancy", (5,), "uint8", [0, 2, 4], [1, 300, 4]),
    ("mask", (3,), "uint8", np.array([True, True, True]), [1, 300, 4]),
    ("empty-selection", (3,), "uint8", slice(0, 0), [300]),
]


def _key(key, mod):
    return mod.asarray(key) if isinstance(key, np.ndarray) else key


def _assign(mod, shape, dtype, key, value):
    a = mod.zeros(shape, dtype)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            a[_key(key, mod)] = value
            err = None
        except Exception as e:  # noqa: BLE001 - the exception is the compared result
            err = (type(e), str(e))
    return np.asarray(a), err, [str(m.message) for m in w]


@pytest.mark.parametrize("shape,dtype,key,value", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_eager_partial_store_equals_numpys(shape, dtype, key, value):
    want, want_err, want_w = _assign(np, shape, dtype, key, value)
    got, got_err, got_w = _assign(npc, shape, dtype, key, value)
    assert want_err is not None, "NumPy raises for this case"
    assert got_err == want_err
    assert got_w == want_w
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("shape,dtype,key,value", [pytest.param(*c[1:], id=c[0]) for c in CASES
                                                   if not isinstance(c[3], (list, np.ndarray))])
def test_compiled_partial_store_equals_numpys(shape, dtype, key, value, backend):
    def f(a, b):
        try:
            a[key] = value
        except (OverflowError, ValueError, TypeError):
            b += 1  # the function goes on after the error
        return a * 2

    def run(fn):
        a, b = np.zeros(shape, dtype), np.zeros(2)
        try:
            r, err = fn(a, b), None
        except Exception as e:  # noqa: BLE001
            r, err = None, (type(e), str(e))
        return a, b, r, err

    want = run(f)
    g = npc.compile(f, backend=backend)
    for _ in range(2):  # the tracing call and a replay
        got = run(g)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(np.asarray(got[2]), want[2])
        assert got[3] == want[3]

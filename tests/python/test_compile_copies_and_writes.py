"""Writes in compiled functions land where NumPy's land, and nowhere else: a value that NumPy
copies (a NumPy scalar: an element, `x[()]` of a 0-d array, `np.flip` of one) does not see a
later write into its source; an assignment that runs eagerly at a graph break (one the graph
cannot express) writes into the traced array itself. Both backends against NumPy running the
same function, on the tracing call, replays and new sizes."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-copies-and-writes")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


# ---------------------------------------------------------------- scalar results are values
def flip_of_0d_then_mask_write(a0, a1):
    v3 = np.flip(a1)            # a1[()]: a NumPy scalar
    a1[a1 < 0] = -3.0
    return v3


def empty_index_of_0d_then_write(a1):
    v = a1[()]
    a1[...] = 7
    return v, a1 * 1


def element_then_inplace(a0):
    v1 = a0[0]
    a0 //= v1
    return v1


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_index_results_do_not_see_later_writes(backend):
    one = (np.ones(3), np.array(-1.0))
    check(flip_of_0d_then_mask_write, one, one, (np.ones(4), np.array(-1.0)), backend=backend)
    check(empty_index_of_0d_then_write, (np.array(2, np.int16),), (np.array(3, np.int16),), backend=backend)
    x = np.array([2.75, 1.25], np.float16)
    check(element_then_inplace, (x,), (x,), backend=backend)


# ---------------------------------------------------------------- eager writes at a break
def reversed_rows_write(a0):
    v5 = np.where(a0 != 0, a0, a0)
    v5[::-1, ...] = 1            # at symbolic sizes: an eager assignment at a graph break
    return v5


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("order", ["C", "F"])
def test_eager_assignment_into_a_value_realized_at_a_break(order, backend):
    def arg(n):
        a = np.arange(n * n, dtype=np.int8).reshape(n, n) - 3
        return (np.asfortranarray(a) if order == "F" else a,)

    check(reversed_rows_write, arg(3), arg(3), arg(4), arg(5), backend=backend)


# ---------------------------------------------------------------- writes before an exception
def write_then_invert_float(a0, s0):
    a0[...] = s0
    v3 = a0.astype(np.float64)
    np.invert(v3)                # TypeError: the write above has happened


def two_writes_then_overflow(a0, a2, s0):
    a2[...] = a0
    a2[...] = s0                 # OverflowError (-3 into uint64): the first write has happened


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_before_an_exception_reach_the_argument(backend):
    args = (np.array(1, np.int32), 300)
    check(write_then_invert_float, args, args, backend=backend)
    args = (np.array(1.0, np.float32), np.array(2, np.uint64), -3)
    check(two_writes_then_overflow, args, args, backend=backend)


# ---------------------------------------------------------------- values of another kind
def empty_fancy_string_assign(a):
    a[[]] = np.array(["a"])      # nothing selected: nothing converted
    return a


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float64, np.int8])
def test_empty_fancy_assignment_of_strings(dtype, backend):
    check(empty_fancy_string_assign, (np.ones(3, dtype),), (np.ones(3, dtype),), backend=backend)


@pytest.mark.parametrize("key, value", [
    ([], np.array(["a"])), ([], np.array(["a", "b"])), ([1], np.array(["a"])),
    (np.zeros(3, bool), np.array(["x"])), ([], np.array([["1", "2"]])),
])
def test_eager_fancy_assignment_of_strings(key, value):
    def outcome(xp):
        a = xp.ones(3)
        try:
            a[key] = value
        except Exception as e:  # noqa: BLE001  (compared with NumPy's)
            return type(e), str(e)
        return np.asarray(a).tolist()

    assert outcome(npc) == outcome(np)


# ---------------------------------------------------------------- layout functions are views
# numpy.ascontiguousarray/asfortranarray of an array that has the layout return a view of
# it (of a 0-d array too, reshaped to 1-d): a later write into the source shows in it.
def contiguous_of_transposed_0d(a0):
    v3 = np.ascontiguousarray(a0.T)
    a0[...] = True
    return np.median(v3, axis=-1, keepdims=True), v3 * 1


def layouts_then_write(a):
    v = np.ascontiguousarray(a.T)      # a copy (a.T is F-ordered)
    w = np.asfortranarray(a.T)         # a view
    x = np.ascontiguousarray(a[1:])    # a view
    a[...] += 1
    return v * 1, w * 1, x * 1, np.ascontiguousarray(a[::2], dtype=np.float32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_layout_functions_return_views(backend):
    check(contiguous_of_transposed_0d, (np.array(0, np.int8),), (np.array(3, np.int8),), backend=backend)
    check(layouts_then_write, *[(np.arange(n * 2.0).reshape(n, 2),) for n in (3, 3, 4, 5)], backend=backend)

"""Checks of dead code: an integer power whose result is unused still raises NumPy's
ValueError for a negative exponent in compiled code (Note [checks of dead code] in
src/tracer/graph.cpp), on the tracing call and on replays, with literal and runtime (Python
int argument) exponents; empty operands and non-negative exponents raise nothing, as in NumPy."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-dead-checks")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def dead_literal(a):
    v = a ** -3  # noqa: F841  (unused: NumPy still raises)
    return a + 1


def dead_runtime(a, k):
    v = np.power(a, k)  # noqa: F841
    return a * 2


def dead_in_loop(a):
    for i in range(4):
        v = a ** (1 - i)  # noqa: F841  (negative from the third iteration)
        a = a + 1
    return a


def dead_then_write(a):
    a += 1
    v = a[:1] ** -1  # noqa: F841
    a *= 3
    return ()


def dead_square(a):
    v = a ** 2  # noqa: F841
    return a - 1


INT = np.array([1, 2, 3], np.int64)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_dead_negative_literal_power_raises(backend, dtype):
    x = INT.astype(dtype)
    check(dead_literal, (x,), (x,), (x[::-1],), (np.array(5, dtype),), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dead_runtime_exponent(backend):
    x = INT
    check(dead_runtime, (x, 2), (x, 3), (x, -1), (x, -2), (x, 0), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dead_power_of_empty_or_float_does_not_raise(backend):
    check(dead_literal, (np.array([], np.int64),), (np.ones((0, 3), np.int32),),
          (np.array([1.5, 2.0]),), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dead_power_in_a_loop(backend):
    check(dead_in_loop, (INT,), (INT,), (INT[:2],), backend=backend)


def write_then_index(a, i):
    a += 1
    return a[i] * 2


def live_then_write(a):
    a += 1
    v = a ** -1
    a *= 3
    return v


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [dead_then_write, live_then_write])
def test_writes_before_a_raising_operation_stay(backend, f):
    # Note [writes before an exception] in src/tracer/interpret.cpp
    check(f, (INT,), (INT,), (INT[:2],), backend=backend)


@pytest.mark.xfail(strict=True, reason="an IndexError of an index array is checked before the graph runs: "
                   "the writes into the arguments made before the indexing are lost")
@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_before_an_index_error_stay(backend):
    check(write_then_index, (INT, np.array([0, 5])), backend=backend)

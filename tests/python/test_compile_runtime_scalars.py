"""Python float arguments of compiled functions (runtime scalars, Note [runtime scalars] in
src/tracer/trace_nodes.cpp): every use gives what the Python float gives in NumPy, on the tracing
call and on replays with other values; uses that need the value make the argument static."""
import math

import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-runtime-scalars")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def w_index(a, s):
    a[0] = s
    return a * 1


def w_step(a, s):
    a[::2] = s
    return a * 1


def w_ellipsis(a, s):
    a[...] = s
    return a * 1


def w_fill(a, s):
    a.fill(s)
    return a * 1


def w_int(a, s):
    b = a.astype(np.int32)
    b[1] = s
    return b


PROGRAMS = [
    lambda a, s: np.cos(s),
    lambda a, s: np.abs(s) + 100,
    lambda a, s: np.sqrt(s),
    lambda a, s: np.clip(s, 0.5, 3),
    lambda a, s: np.float64(s) * 2,
    lambda a, s: np.float32(s) + a,
    lambda a, s: a * np.cos(s),
    lambda a, s: a * np.float64(s),
    lambda a, s: a + np.asarray(s),
    lambda a, s: np.isnan(s),
    lambda a, s: np.full(3, np.sin(s)) + a[:3],
    lambda a, s: a * math.exp(s),
    lambda a, s: a * -s,
    lambda a, s: a * s + 1,
    lambda a, s: np.maximum(a, s),
    lambda a, s: np.where(a > 1, s, a),
    lambda a, s: (a + 1, np.real(s)),
    lambda a, s: (a + 1, np.imag(s)),
    lambda a, s: a * s.real + s.imag,
    w_index, w_step, w_ellipsis, w_fill, w_int,
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(PROGRAMS)))
def test_float_argument_is_the_python_float(k, backend):
    f = PROGRAMS[k]
    a = np.arange(4.0)
    check(f, (a, 0.25), (a, 0.25), (a, 0.5), (a * 2, -1.5), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_float_arguments_with_arrays_stay_runtime(backend):
    # Used only as operands of array operations, a float does not cause a trace per value.
    f = lambda a, s: a * s + np.sin(a) / s  # noqa: E731
    a = np.arange(4.0)
    check(f, *[(a, v) for v in (0.25, 0.5, 2.0, -3.0)], backend=backend)
    assert compiler.stats()["traces"] == 1

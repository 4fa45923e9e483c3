"""isinstance of the values a compiled function sees (Note [classes of traced values] in
python/npc/_array.py): a traced array is a numpy.ndarray to the program's code, a traced scalar
result the NumPy scalar type of its dtype (a float64 is a float), so code that branches on
isinstance takes NumPy's branch, traced or run on npc views ("npc" eager mode). Results,
warnings and writes are compared with NumPy on the tracing call and on replays."""
import numbers

import numpy as np
import pytest

import npc
from _compile_diff import BACKENDS, check


def doubles_arrays(x):
    if isinstance(x, np.ndarray):
        return x * 2
    return x + 1


def doubles_float_sums(x):
    s = x.sum()
    if isinstance(s, float):
        return s * 2
    return s + 1


def classes_of_values(x):
    s, i, b = x.max(), x.argmax(), (x > 1).any()
    z = x.sum() * 1j
    views = (x.T, x[1:], x.reshape(-1), x[..., None], np.asarray(x), x + 1, np.zeros(2))
    return (
        [isinstance(v, np.ndarray) for v in views],
        [isinstance(s, t) for t in (np.ndarray, np.generic, np.floating, np.float64, float, numbers.Real, int)],
        [isinstance(i, t) for t in (np.ndarray, np.integer, np.int64, int, numbers.Integral, float)],
        [isinstance(b, t) for t in (np.ndarray, np.bool_, bool, np.generic)],
        [isinstance(z, t) for t in (complex, np.complexfloating, numbers.Complex, float)],
        [np.isscalar(v) for v in (s, i, b, x)],
        isinstance(x[0], np.float64), isinstance(x[:1], np.ndarray),
        isinstance(np.array(x[0]), np.ndarray),
    )


def dispatches_on_class(x, y):
    out = []
    for v in (x, y, x.sum(), y.max(), 3.0, [1, 2]):
        if isinstance(v, np.ndarray):
            out.append(v * 2)
        elif isinstance(v, (float, np.floating)):
            out.append(v + 0.5)
        elif isinstance(v, (int, np.integer)):
            out.append(v - 1)
        else:
            out.append(len(v))
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [doubles_arrays, doubles_float_sums, classes_of_values])
def test_isinstance_sees_numpy_classes(fn, backend):
    x = np.arange(6.0).reshape(2, 3)
    check(fn, (x,), (x + 1,), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_branches_on_classes(backend):
    check(dispatches_on_class, (np.arange(4.0), np.arange(3)), (np.ones(4), np.arange(3) * 2), backend=backend)


def test_npc_arrays_outside_compiled_code_keep_their_class():
    a = npc.arange(3.0)
    assert not isinstance(a, np.ndarray) and isinstance(a, npc.ndarray)
    assert a.__class__ is npc.ndarray and type(a) is npc.ndarray


def test_isinstance_in_the_npc_eager_mode():
    # A function with graph breaks may run eagerly on npc views of its NumPy arguments (Note
    # [eager npc calls] in python/npc/compiler/_convert.py); the views stand for NumPy arrays.
    def both(x):
        return doubles_arrays(x) + doubles_float_sums(x)

    cf = npc.compile(both)
    x = np.arange(5.0)
    np.testing.assert_array_equal(cf._run_eager("npc", (x,), {}), both(x))
    assert not isinstance(npc.arange(3.0), np.ndarray)  # and only while it runs

"""Shape errors of compiled functions are NumPy's (type and message): operands that do not
broadcast, out= arrays of another shape than the broadcast, values that do not fit the
region they are assigned to. On the tracing call and on calls with new sizes, both backends
against NumPy running the same function."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-shape-errors")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def setitem_transposed(a):
    a[:] = a.T
    return a * 1


def setitem_column(a):
    a[:, 0] = np.ones(3)
    return a * 1


def iadd_higher_rank(a):
    a += np.ones((2, 2, 3))
    return a * 1


def setitem_row(a, v):
    a[0] = v
    return a * 1


A = np.ones((2, 3))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [
    lambda a: a + a.T,
    lambda a: a + np.ones(a.shape[0] + 1),
    lambda a: np.where(a > 0, a, a.T),
    lambda a: np.add(a, 1, out=np.zeros((3, 2))),
    lambda a: np.add(a, 1, out=np.zeros(3)),
    lambda a: np.add(a, 1, out=np.zeros((2, 2, 3))),
    lambda a: np.multiply(a, a, where=np.ones((3, 2), bool)),
    iadd_higher_rank,
    setitem_transposed,
    setitem_column,
])
def test_shape_error_messages(f, backend):
    check(f, (A.copy(),), (A.copy(),), (np.ones((4, 5)),), (np.ones((3, 2)),), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_operands_new_sizes(backend):
    check(lambda x, y: x * y, (np.zeros(3), np.zeros(4)), (np.zeros(3), np.zeros(3)),
          (np.zeros(5), np.zeros(5)), (np.zeros(5), np.zeros(6)), (np.zeros(7), np.zeros(2)), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_setitem_value_new_sizes(backend):
    check(setitem_row, (np.zeros((2, 3)), np.ones(3)), (np.zeros((2, 4)), np.ones(4)),
          (np.zeros((2, 5)), np.ones(4)), (np.zeros((2, 5)), np.ones((1, 5))), (np.zeros((2, 5)), np.ones((2, 5))),
          (np.zeros((3, 6)), np.ones(1)), backend=backend)


REDUCE_OUT = [
    (lambda a, o: np.sum(a, axis=0, keepdims=True, out=o), (4,)),
    (lambda a, o: np.sum(a, axis=0, keepdims=True, out=o), (1, 1, 4)),
    (lambda a, o: a.mean(axis=1, keepdims=True, out=o), (3,)),
    (lambda a, o: np.sum(a, axis=0, out=o), (1, 4)),
    (lambda a, o: np.sum(a, axis=0, keepdims=True, out=o), (1, 4)),
    (lambda a, o: a.max(axis=1, out=o), (3,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(REDUCE_OUT)))
def test_reduction_out_of_the_wrong_rank(k, backend):
    """A reduction into an out= array of the wrong number of dimensions raises NumPy's
    ValueError (with the keepdims remark), or writes into a right one, as eagerly."""
    f, out_shape = REDUCE_OUT[k]
    a = np.arange(12.0).reshape(3, 4)

    def outcome(fn):
        o = np.zeros(out_shape)
        try:
            r = fn(a.copy(), o)
        except ValueError as e:
            return ("ValueError", str(e))
        return ("ok", np.asarray(r).tolist(), o.tolist())

    assert outcome(npc.compile(f, backend=backend)) == outcome(f)

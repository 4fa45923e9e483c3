"""Arrays a compiled program holds apart come back apart (Note [distinct buffers] in
src/tracer/trace_segments.cpp): interning merges equal values (np.zeros twice, x + 1 twice) and a copy of
an unwritten array has its source's value, but their memory must stay separate, as in NumPy."""
import numpy as np
import pytest

import npc

BACKENDS = ["fused", "eager"]


def _zeros_twice(x):
    return np.zeros(3), np.zeros(3)


def _three_equal(x):
    return x + 1, x + 1, x + 1


def _arg_and_copy(x):
    return x, x.copy()


def _result_and_copy(x):
    y = x * 2
    return y, y.copy()


def _copy_view(x):
    y = x.copy()
    return y[1:], x


def _write_after_break(x):
    s0 = np.zeros(x.shape)
    s1 = np.zeros(x.shape)
    float(x.sum())  # graph break: both buffers are live
    s0 += x
    return s0, s1


def _copy_written_after_break(x):
    y = x.copy()
    float(x[0])
    y[0] = -5.0
    return x, y


def _solve_accumulate(a, v):
    # The shape of the contour-integral program: two accumulators, a library call between.
    s0 = np.zeros(v.shape, np.complex128)
    s1 = np.zeros(v.shape, np.complex128)
    for k in range(2):
        z = 0.8 * np.exp(1j * (k + 0.5))
        y = np.linalg.solve(z * np.eye(a.shape[0]) - a, v)
        s0 += y
        s1 += z * y
    return s0, s1


def _astype_then_write(x):
    v = x.astype(np.float64)  # a copy: the write stays in it
    v[...] = 7.0
    return x, v


def _astype_no_copy_then_write(x):
    v = x.astype(np.float64, copy=False)  # the argument itself: the write reaches it
    v[1:] = 7.0
    return v * 1


CASES = [(_astype_then_write, 1), (_astype_no_copy_then_write, 1), (_zeros_twice, 1), (_three_equal, 1), (_arg_and_copy, 1), (_result_and_copy, 1), (_copy_view, 1),
         (_write_after_break, 1), (_copy_written_after_break, 1), (_solve_accumulate, 2)]


def _args(nargs):
    rng = np.random.default_rng(0)
    if nargs == 1:
        return (rng.random(4),)
    return rng.random((3, 3)), rng.random((3, 2))


def _storage_groups(outs, args):
    """Pairs (i, j) of results i < j that share memory, and (i, "arg", k) for result i and
    argument k that do not (the argument pairs NumPy shares are returned arguments: see
    test_returned_argument_is_the_argument)."""
    outs = list(outs)
    arrays = [isinstance(o, np.ndarray) for o in outs]
    pairs = {(i, j) for i in range(len(outs)) for j in range(i + 1, len(outs))
             if arrays[i] and arrays[j] and np.shares_memory(outs[i], outs[j])}
    apart = {(i, "arg", k) for i in range(len(outs)) for k in range(len(args))
             if arrays[i] and not np.shares_memory(outs[i], args[k])}
    return pairs, apart


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,nargs", CASES, ids=[c[0].__name__ for c in CASES])
def test_results_keep_numpy_memory_sharing(fn, nargs, backend):
    cf = npc.compile(fn, backend=backend)
    for call in ("trace", "replay"):
        a_np, a_npc = _args(nargs), _args(nargs)
        exp = fn(*a_np)
        got = cf(*a_npc)
        for e, g in zip(exp, got):
            np.testing.assert_allclose(g, e, rtol=1e-12, err_msg=call)
        pairs_e, apart_e = _storage_groups(exp, a_np)
        pairs_g, apart_g = _storage_groups(got, a_npc)
        assert pairs_g == pairs_e, call
        assert apart_e <= apart_g, call
        # Writing into a fresh result changes no other result and no argument, as in NumPy.
        fresh = [i for i in range(len(got)) if all((i, "arg", k) in apart_e for k in range(len(a_np)))]
        before = [np.array(g, copy=True) for g in got]
        args_before = [np.array(a, copy=True) for a in a_npc]
        for i in fresh[:1]:
            got[i][...] = 7
            for k in range(len(got)):
                if k != i and (min(i, k), max(i, k)) not in pairs_e:
                    np.testing.assert_array_equal(got[k], before[k], err_msg=call)
            for a, b in zip(a_npc, args_before):
                np.testing.assert_array_equal(a, b, err_msg=call)


@pytest.mark.parametrize("backend", BACKENDS)
def test_returned_argument_is_the_argument(backend):
    # Note [results that view inputs]; tests/python/test_compile_result_aliasing.py has more.
    cf = npc.compile(lambda x: (x, x + 1), backend=backend)
    for _ in range(3):
        a = np.ones(3)
        assert cf(a)[0] is a

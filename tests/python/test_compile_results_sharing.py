"""Results that view one another come back sharing memory as in NumPy (Note [results that view
each other] in src/tracer/trace_segments.cpp): `c = a + b; return c, c[1:]` gives two arrays over
one memory, a write through one shows in the other, and an array returned twice is one object.
Each program runs with NumPy and compiled (both backends), traced, replayed and with new sizes;
the results' relations (identity, shared memory, layout) and values after writes are compared."""
import numpy as np
import pytest

import npc

BACKENDS = ["fused", "eager"]


def _leaves(r):
    if isinstance(r, dict):
        r = list(r.values())
    if isinstance(r, (tuple, list)):
        out = []
        for v in r:
            out.extend(_leaves(v))
        return out
    return [r]


def _relations(result):
    xs = [x for x in _leaves(result) if isinstance(x, np.ndarray)]
    rel = []
    for i, x in enumerate(xs):
        for j, y in enumerate(xs[:i]):
            rel.append((i, j, x is y, np.shares_memory(x, y)))
        rel.append((i, x.shape, x.dtype.str, bool(x.flags.writeable),
                    tuple(st for n, st in zip(x.shape, x.strides) if n != 1)))
    return rel


def _check(fn, make_args, backend, calls=4):
    cf = npc.compile(fn, backend=backend)
    for i in range(calls):
        exp, got = fn(*make_args(i)), cf(*make_args(i))
        assert type(got) is type(exp)
        for e, g in zip(_leaves(exp), _leaves(got)):
            assert type(g) is type(e), f"call {i}"
            np.testing.assert_array_equal(g, e, err_msg=f"call {i}")
        assert _relations(got) == _relations(exp), f"call {i}"
        # Writes through each result in turn, compared after every write.
        for k, (e, g) in enumerate(zip(_leaves(exp), _leaves(got))):
            if isinstance(e, np.ndarray) and e.flags.writeable and e.size:
                e.flat[0] = -7 - k
                g.flat[0] = -7 - k
                for e2, g2 in zip(_leaves(exp), _leaves(got)):
                    np.testing.assert_array_equal(g2, e2, err_msg=f"call {i}, after a write into result {k}")


def _sized(shape):
    return lambda i: [np.arange(float(np.prod(shape[:-1]) * (shape[-1] + i))).reshape(*shape[:-1], shape[-1] + i),
                      np.ones(shape[-1] + i)]


PROGRAMS = {
    "twice": lambda a, b: (a + b, ) * 2,
    "same_object_twice": lambda a, b: (lambda c: (c, c))(a * b),
    "slice": lambda a, b: (lambda c: (c, c[1:]))(a + b),
    "views_only": lambda a, b: (lambda c: (c[1:], c[:, ::-1], c.T))(a - b),
    "reshape": lambda a, b: (lambda c: (c.reshape(-1), c))(a + b),
    "row_and_column": lambda a, b: (lambda c: [c[0], c[:, 1], c])(a * 2 + b),
    "dict": lambda a, b: (lambda c: {"c": c, "t": c.T, "again": c})(a + b),
    "nested": lambda a, b: (lambda c: (c, [c[1:], (c[0],)]))(a / (b + 1)),
    "two_buffers": lambda a, b: (lambda c, d: (c, d, c[1:], d[::2]))(a + b, a - b),
    "complex_parts": lambda a, b: (lambda z: (z, z.real, z.imag))(a + 1j * b),
    "after_write": lambda a, b: _after_write(a, b),
    "view_of_written": lambda a, b: _view_of_written(a, b),
}


def _after_write(a, b):
    c = a + b
    v = c[1:]
    c[0] = 100.0
    return c, v


def _view_of_written(a, b):
    c = a * b
    v = c[:, 0]
    v += 1
    return v, c


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_results_viewing_each_other(name, backend):
    _check(PROGRAMS[name], lambda i: [np.arange(12.0).reshape(3, 4), np.ones(4)], backend, calls=3)
    _check(PROGRAMS[name], _sized((3, 4)), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_results_viewing_each_other_after_a_break(backend):
    def f(a, b):
        c = a + b
        float(c[0, 0])
        d = c * 2
        return c, c[1:], d, d.T, c

    _check(f, _sized((3, 4)), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_f_ordered_result_and_its_views(backend):
    def f(a):
        c = a + 1  # F-ordered, as `a`
        return c, c.T, c[1:], c.ravel()  # ravel of an F-ordered array: a copy

    _check(f, lambda i: [np.asfortranarray(np.arange(float(3 * (4 + i))).reshape(3, 4 + i))], backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_npc_arguments(backend):
    cf = npc.compile(lambda a: (lambda c: (c, c[1:], c))(a + 1), backend=backend)
    for _ in range(3):
        r = cf(npc.arange(5.0))
        assert r[0] is r[2] and np.shares_memory(r[0], r[1])
        r[1][0] = 50.0
        assert r[0][1] == 50.0

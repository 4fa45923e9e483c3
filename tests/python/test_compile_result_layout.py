"""The memory layout of traced results decides whether `ravel()`/`reshape` of them is a view
or a copy, and so whether a later write shows through: it must be NumPy's (K order: a ufunc
of an F-ordered array is F-ordered, and its ravel() a copy)."""
import numpy as np
import pytest

import npc


def _writes_through_ravel(a0, s1):
    v1 = a0 + a0
    v3 = v1.ravel()  # NumPy: a copy, v1 being F-ordered
    v3[v3 != 0] += s1
    return v1.ravel()


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_ravel_of_an_f_ordered_result_is_a_copy(backend):
    # Fuzzer seed 70524: the traced sum was C-ordered, its ravel() a view that the write reached.
    a = np.asfortranarray(np.arange(1, 21, dtype=np.uint16).reshape(5, 4))
    want = _writes_through_ravel(a.copy(order="K"), True)
    npc.compiler.reset()
    got = npc.compile(_writes_through_ravel, backend=backend)(np.asfortranarray(a), True)
    np.testing.assert_array_equal(got, want)


def test_eager_ravel_of_an_f_ordered_result_is_a_copy():
    a = np.asfortranarray(np.arange(1, 21, dtype=np.uint16).reshape(5, 4))
    want = _writes_through_ravel(np.asfortranarray(a), True)
    got = _writes_through_ravel(npc.asarray(np.asfortranarray(a)), True)
    np.testing.assert_array_equal(np.asarray(got), want)


F = np.asfortranarray(np.arange(1.0, 25.0).reshape(4, 6))
C = np.arange(1.0, 25.0).reshape(4, 6)
T3 = np.arange(1.0, 61.0).reshape(3, 4, 5).transpose(2, 0, 1)
LAYOUTS = {
    "F plus scalar": (lambda a, b: a + 1, F),
    "F plus C": (lambda a, b: a + b, F),  # operands disagree: C order wins
    "C plus F": (lambda a, b: b + a, F),
    "F plus broadcast row": (lambda a, b: a + b[0], F),
    "chain of F": (lambda a, b: np.sqrt(a) * 2 - a, F),
    "transposed 3-D": (lambda a, b: np.sqrt(a) - a, T3),
    "transpose of F": (lambda a, b: a.T * 2, F),
    "reversed inner axis": (lambda a, b: a[:, ::-1] + 1, C),
    "two results": (lambda a, b: (a + 1, a * 2), F),
    "divmod": (lambda a, b: np.divmod(a, 3), F),
    "order=C": (lambda a, b: np.add(a, 1, order="C"), F),
}
ORDER_A = (lambda a, b: np.add(a, 1, order="A"), F)  # a NumPy fallback in compiled code


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_elementwise_results_have_numpys_strides(name, backend):
    # Note [output layout] in src/ops/ufunc.cpp: NumPy's iterator order, on the tracing call
    # and on replays.
    f, a = LAYOUTS[name]
    want = f(a, C)
    npc.compiler.reset()
    cf = npc.compile(f, backend=backend)
    for _ in range(2):
        got = cf(a, C)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert g.strides == w.strides
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", ["F plus C", "C plus F", "order=A", "transposed 3-D"])
def test_eager_elementwise_results_have_numpys_strides(name):
    f, a = LAYOUTS[name] if name in LAYOUTS else ORDER_A
    assert np.asarray(f(npc.asarray(a), npc.asarray(C))).strides == f(a, C).strides


COPIES = {
    "astype": lambda a, b: a.astype(np.float32),
    "astype order=C": lambda a, b: a.astype(np.float32, order="C"),
    "ndarray.copy": lambda a, b: a.copy(),  # C order
    "copy of a result": lambda a, b: np.copy(a * 2),
    "where": lambda a, b: np.where(a > 3, a, 0.0),
    "where of F and C": lambda a, b: np.where(a > 3, a, b),
    "astype then ravel": lambda a, b: a.astype(np.float32).ravel(),
}
# A copy of an argument in its own dtype is the argument's value in the graph (SSA values
# are immutable): the returned buffer becomes an explicit copy in the layout the trace gave
# it (Note [distinct buffers] in src/tracer/trace_segments.cpp), F-ordered as NumPy's.
COPIES.update({
    "np.copy": lambda a, b: np.copy(a),
    "copy order=K": lambda a, b: a.copy(order="K"),
    "astype same dtype": lambda a, b: a.astype(np.float64),
    "copy of a transpose": lambda a, b: np.copy(b.T),
    "copy order=F": lambda a, b: b.copy(order="F"),
})
# Copies of computed values and of views of them (Note [copies keep their order] in
# src/tracer/trace_hooks.cpp): the graph node would be the value itself, or a View of it,
# which an output lays out in the view's memory order.
COPIES.update({
    "copy of a computed transpose": lambda a, b: (b * 2).T.copy(),
    "F copy of a computed value": lambda a, b: (b * 2).copy(order="F"),
    "np.copy order=F of a computed value": lambda a, b: np.copy(b + 1, order="F"),
    "asfortranarray of a computed value": lambda a, b: np.asfortranarray(b * 2),
    "ascontiguousarray of a computed transpose": lambda a, b: np.ascontiguousarray((b * 2).T),
    "astype same dtype order=C of a transpose": lambda a, b: (b * 2).T.astype(np.float64, order="C"),
    "copy order=A of a computed transpose": lambda a, b: (b * 2).T.copy(order="A"),
    "copy order=K of a computed transpose": lambda a, b: np.copy((b * 2).T, order="K"),
    "copy of a reversed slice": lambda a, b: (b * 2)[::-1, ::2].copy(),
    "copy of a 3-D permutation": lambda a, b: (b.reshape(2, 3, 4) * 2).transpose(2, 0, 1).copy(),
    "F copy of a 3-D permutation": lambda a, b: np.asfortranarray((b.reshape(2, 3, 4) * 2).transpose(1, 2, 0)),
})


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("f", list(COPIES.values()), ids=list(COPIES))
def test_copies_and_where_have_numpys_strides(f, backend):
    # copy/astype lay out as empty_like(order) does (npc::like_axes), where as a ufunc.
    want = f(F, C)
    npc.compiler.reset()
    cf = npc.compile(f, backend=backend)
    for _ in range(2):
        got = cf(F, C)
        assert got.strides == want.strides
        np.testing.assert_array_equal(got, want)


def _write_through_copy(a):
    v = a.astype(np.float64)  # F-ordered: ravel() is a copy
    r = v.ravel()
    r[0] = -1
    return v


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_ravel_of_an_f_ordered_copy_is_a_copy(backend):
    npc.compiler.reset()
    got = npc.compile(_write_through_copy, backend=backend)(F)
    np.testing.assert_array_equal(got, _write_through_copy(F))


def _copies_apart(a):
    t = a * 2
    c1, c2 = t.T.copy(), t.T.copy(order="F")
    c1[0, 0] = -1.0  # neither the other copy nor t sees it
    return c1, c2, t


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_copies_of_one_computed_value_are_apart(backend):
    want = _copies_apart(C)
    npc.compiler.reset()
    cf = npc.compile(_copies_apart, backend=backend)
    for _ in range(2):
        got = cf(C)
        for g, w in zip(got, want):
            assert g.strides == w.strides
            np.testing.assert_array_equal(g, w)

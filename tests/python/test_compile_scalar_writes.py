"""Writes that are not operators into scalar results (`x = a[1]`, `s = a.sum()`, `v @ v`):
a NumPy scalar is immutable, so item assignment, out=, copyto/place, attribute setters and
the flags raise NumPy's errors, and the methods NumPy's scalars run on a temporary array
(fill, put, resize, setflags, flat) leave the scalar and its other names alone (Note [writes
into scalar results] in python/npc/csrc/bind_ndarray.cpp). Each write against NumPy running
the same function: value and type, exception type and message, warnings, and the arguments
after the call; several dtypes, both backends, the tracing call and a replay. A 0-d array that
is not a scalar result is written in place, as in NumPy."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check, outcome


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-scalar-writes")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


DTYPES = [np.bool_, np.int64, np.uint8, np.float64, np.float32, np.complex128]

# Writes NumPy refuses for a scalar (TypeError, AttributeError, ValueError), or runs on a
# temporary copy (no error, the scalar unchanged).
WRITES = [
    # item assignment
    "x[...] = 5", "x[()] = 5", "x[0] = 5", "x[None] = 5", "x[True] = 5", "x[...] = b",
    # out= of ufuncs, of their methods and of the reductions built on them
    "np.add(x, 1, out=x)", "np.add(b[0], 1, x)", "np.add(b[0], 1, out=(x,))", "np.negative(b[0], out=x)",
    "np.divmod(b[0], 1, out=(x, None))", "np.isnan(b[0], out=x)", "np.add.reduce(b, out=x)",
    "np.add.accumulate(b, out=x)", "b.sum(out=x)", "np.sum(b, out=x)", "b.max(out=x)", "np.min(b, out=x)",
    "b.prod(out=x)", "b.any(out=x)", "np.all(b, out=x)", "np.clip(b[0], 0, 1, out=x)", "np.add.at(x, 0, 1)",
    "np.matmul(b, b, out=x)", "np.vecdot(b, b, out=x)", "np.mean(b, out=x)", "np.std(b, out=x)", "np.ptp(b, out=x)",
    # out= of functions NumPy writes in C: their own messages
    "np.cumsum(b, out=x)", "b.argmax(out=x)", "np.argmin(b, out=x)", "np.take(b, 0, out=x)",
    "np.round(b[0], out=x)", "np.dot(b, b, out=x)", "np.trace(np.ones((2, 2)), out=x)",
    "np.choose(0, [b[0]], out=x)", "np.compress([True], b[:1], out=x)",
    # functions whose first argument must be an array
    "np.copyto(x, 3)", "np.copyto(x, b[0], casting='unsafe')", "np.place(x, True, [3])",
    # attributes
    "x.shape = (1,)", "x.shape = ()", "x.strides = ()", "x.dtype = x.dtype", "x.real = 3", "x.imag = 3",
    "x.flat = 9", "del x.shape", "x.flags.writeable = False", "x.flags['W'] = True", "x.flags.aligned = True",
    # methods NumPy's scalars run on a temporary array
    "x.fill(0)", "x.fill(b[2])", "x.flat[0] = 9", "x.flat[5] = 9", "np.put(x, [0], [3])", "x.put([0], [3])",
    "x.put([5], [3])", "x.resize((1,))", "x.resize(3, refcheck=False)", "x.resize(())", "x.setflags(write=False)",
    "x.setflags(write=True)", "np.put_along_axis(x, np.array([0]), 3, None)",
    # methods with a scalar's own errors
    "x.sort()", "x.byteswap(inplace=True)", "x.setfield(3, x.dtype)", "np.fill_diagonal(x, 3)",
]

# Scalar results: an element, a reduction, a product of vectors, a ufunc of elements, and an
# element realized by a graph break (.item() needs its value).
SOURCES = ["a[1]", "a.max()", "np.add(a[0], a[1])", "a[1]; x.item()"]


def _program(source, write):
    # `t` keeps the scalar that `x` named before the write.
    src = (f"def f(a, b):\n    x = {source}\n    t = x\n    {write}\n"
           f"    return x, t, x + 1\n")
    ns = {"np": np}
    exec(src, ns)  # noqa: S102  (a test program per write)
    return ns["f"]


def _args(dtype):
    a = (np.arange(5) * 3 + 1).astype(dtype)
    b = (np.arange(3) + 2).astype(dtype)
    return a, b


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_write_into_an_element_equals_numpy(dtype, backend):
    args = _args(dtype)
    for write in WRITES:
        # the tracing call, then a replay (or a new trace where the first raised)
        check(_program("a[1]", write), args, args, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("source", SOURCES[1:])
@pytest.mark.parametrize("dtype", [np.bool_, np.int64, np.float32, np.complex128], ids=lambda d: np.dtype(d).name)
def test_write_into_other_scalar_results_equals_numpy(source, dtype, backend):
    args = _args(dtype)
    for write in WRITES:
        check(_program(source, write), args, args, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_products_of_vectors_are_scalars(backend):
    for dtype in (np.int64, np.float64, np.complex128):
        args = _args(dtype)
        for source in ("b @ b", "np.dot(b, b)", "np.vdot(b, b)", "np.inner(b, b)"):
            for write in ("x[...] = 5", "x.fill(0)", "np.copyto(x, 3)", "np.multiply(x, 2, out=x)",
                          "x.shape = (1,)", "x.flat[0] = 9", "x.resize((2,))"):
                check(_program(source, write), args, args, backend=backend)


# Arrays made from a scalar result: a NumPy scalar's are fresh arrays, so writes through them
# leave the scalar and its other names alone (Note [views of scalar results] in
# src/tracer/trace_nodes.cpp); the writes used to reach the scalar through a view.
VIEW_WRITES = ["v = x[...]; v[...] = 5", "v = x[None]; v[0] = 5", "x.reshape(1)[0] = 5", "v = x.ravel(); v[0] = 5",
               "v = np.atleast_1d(x); v[0] = 5", "v = np.expand_dims(x, 0); v[0] = 5", "v = np.ravel(x); v[0] = 5",
               "v = np.reshape(x, (1, 1)); v[0, 0] = 5", "np.add(b[0], 1, out=x[...])", "np.copyto(x[...], 5)",
               "x[...][...] = 5", "np.place(x[...], True, [9])", "v = np.ascontiguousarray(x); v[0] = 5",
               "v = x.__array__(); v[...] = 5", "v = x.reshape(()); v[...] = 5"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_writes_through_arrays_of_scalar_results_leave_them_alone(dtype, backend):
    args = _args(dtype)
    for source in SOURCES[:3]:
        for write in VIEW_WRITES:
            check(_program(source, write), args, args, backend=backend)


@pytest.mark.xfail(strict=True, reason="np.asarray(x) of a scalar result realizes it and exports its memory through "
                   "the buffer protocol; NumPy's is a fresh array (Note [views of scalar results])")
@pytest.mark.parametrize("backend", BACKENDS)
def test_asarray_of_a_scalar_result_is_a_fresh_array(backend):
    check(_program("a[1]", "np.asarray(x)[...] = 5"), _args(np.float64), backend=backend)


# 0-d arrays that are not scalar results: written in place (and `a` through a view), as in NumPy.
ARRAYS = ["a[1, ...]", "np.zeros((), a.dtype)", "np.array(a[1])", "a.sum(keepdims=True)[0]", "a[1:2].reshape(())"]
ARRAY_WRITES = ["x[...] = 5", "x[()] = 5", "x.fill(0)", "np.copyto(x, 3)", "np.add(x, 1, out=x, casting='unsafe')",
                "np.sum(b, out=x, dtype=x.dtype)", "x.flat[0] = 9", "np.put(x, [0], [3])", "np.place(x, True, [3])"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.bool_, np.int64, np.float64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_zero_d_arrays_are_written_in_place(dtype, backend):
    args = _args(dtype)
    for source in ARRAYS:
        for write in ARRAY_WRITES:
            src = (f"def f(a, b):\n    x = {source}\n    t = x\n    {write}\n    return x, t, x + 1, a\n")
            ns = {"np": np}
            exec(src, ns)  # noqa: S102
            check(ns["f"], args, args, backend=backend)


def test_eager_elements_are_numpy_scalars():
    # Without compile, npc's element reads and full reductions are NumPy scalars already:
    # the same writes give NumPy's errors and leave the scalars alone.
    for dtype in (np.bool_, np.int64, np.float64, np.complex128):
        a, b = _args(dtype)
        for source in ("a[1]", "a.max()", "np.add(a[0], a[1])"):
            for write in WRITES:
                f = _program(source, write)
                want = outcome(f, (a, b))
                got = outcome(f, (npc.asarray(a), npc.asarray(b)))
                if isinstance(want[0], tuple) and isinstance(want[0][0], type):
                    assert got[0] == want[0], (source, write, got[0], want[0])
                else:
                    assert [type(v) for v in got[0]] == [type(v) for v in want[0]], (source, write)
                    for g, w in zip(got[0], want[0]):
                        np.testing.assert_array_equal(g, w, strict=True)
                assert got[1] == want[1], (source, write)
                for g, w in zip(got[2], want[2]):
                    np.testing.assert_array_equal(np.asarray(g), w, strict=True)

"""Complex absolute values and products on every path NumPy has (Note [complex absolute] in
include/npc/scalar_rules.hpp, Note [scalar loops] in src/tracer/trace.hpp).

NumPy computes |z| in two ways whose results differ in the last bit for about a third of the
values: its SIMD loop (larger * sqrt(fma(r, r, 1))) on arrays, 0-d arrays and np.abs of a
scalar, and npy_cabs (the C library's hypot) in its scalar loop (a negative stride) and in its
scalar arithmetic (Python's abs() of a NumPy complex scalar). Complex products likewise: a
fused SIMD product on arrays, the schoolbook product in scalar arithmetic (`s * t`) and, for
complex64, over negative strides. Eager npc, npc.compile with both backends, 0-d values and
arrays must give NumPy's bits on each path.

npc follows the loops of NumPy's AVX-512 build (dispatch target X86_V4), which NumPy runs on
CPUs with AVX-512. On other CPUs NumPy runs its X86_V3 loops, whose complex absolute values
round differently in a few percent of elements and take other loops for a reversed `out=`:
there npc's results are checked within 1 ULP of NumPy's (Note [NumPy's SIMD paths in tests]
in the Makefile).
"""
import warnings

import numpy as np
import pytest
from numpy.lib.introspect import opt_func_info

import npc

BACKENDS = ["eager", "fused"]
CDTYPES = [np.complex64, np.complex128]


def _differing(dtype, n=16):
    """n complex values whose hypot and SIMD absolute values differ, and whose SIMD and
    schoolbook products with `_partners` differ too: the two loops are told apart."""
    rng = np.random.default_rng(15)
    z = (rng.standard_normal(4000) + 1j * rng.standard_normal(4000)).astype(dtype)
    w = (rng.standard_normal(4000) + 1j * rng.standard_normal(4000)).astype(dtype)
    simd_abs = np.abs(z)
    hypot_abs = np.array([abs(x) for x in z])  # NumPy's scalar arithmetic: npy_cabs
    simd_mul = z * w
    plain_mul = np.array([a * b for a, b in zip(z, w)])
    pick = np.flatnonzero((simd_abs != hypot_abs) & (simd_mul != plain_mul))[:n]
    assert len(pick) == n
    return z[pick], w[pick]


def _numpy_target(dtype):
    """The dispatch target NumPy runs complex absolute of `dtype` with on this CPU."""
    info = opt_func_info(func_name="^absolute$", signature=np.dtype(dtype).name).get("absolute", {})
    return next(iter(info.values()), {}).get("current", "")


AVX512_LOOPS = all(_numpy_target(t) == "X86_V4" for t in CDTYPES)


def _same(exp, got):
    exp, got = np.asarray(exp), np.asarray(got)
    assert type(exp) is type(got) or isinstance(got, np.ndarray)
    assert exp.dtype == got.dtype and exp.shape == got.shape
    if AVX512_LOOPS:
        np.testing.assert_array_equal(got, exp, strict=True)
    else:
        real = exp.real.dtype
        np.testing.assert_array_max_ulp(np.ascontiguousarray(got).view(real), np.ascontiguousarray(exp).view(real),
                                        maxulp=1, dtype=real)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_values_tell_the_loops_apart(dtype):
    # The premise of the tests below: on these values hypot and the SIMD formula differ.
    z, _ = _differing(dtype)
    re, im = np.abs(z.real), np.abs(z.imag)
    assert not np.array_equal(np.hypot(re, im), np.abs(z))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_eager_arrays_and_scalars(dtype):
    z, w = _differing(dtype)
    zc, wc = npc.asarray(z), npc.asarray(w)
    _same(np.abs(z), npc.abs(zc))
    _same(abs(z), abs(zc))
    _same(np.abs(z[::-1]), npc.abs(zc[::-1]))  # NumPy's scalar loop: hypot
    _same(z * w, zc * wc)
    _same(z[::-1] * w, zc[::-1] * wc)
    for k in range(len(z)):
        _same(np.abs(np.array(z[k])), npc.abs(npc.asarray(np.array(z[k]))))  # 0-d array: SIMD
        _same(abs(z[k]), abs(zc[k]))  # a NumPy scalar: npy_cabs
        _same(z[k] * w[k], zc[k] * wc[k])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("layout", ["C", "rev", "step"])
def test_compiled_array_abs(backend, dtype, layout):
    # Fuzzer seed 50069: fused code computed hypot where NumPy runs its SIMD loop.
    z, _ = _differing(dtype)
    make = {"C": lambda: z.copy(), "rev": lambda: z[::-1].copy()[::-1], "step": lambda: np.repeat(z, 2)[::2]}[layout]
    for f in (lambda a: abs(a), lambda a: np.abs(a), lambda a: np.abs(a[::-1]), lambda a: np.abs(a * 1)):
        npc.compiler.reset()
        cf = npc.compile(f, backend=backend)
        for _ in range(2):  # trace, replay
            _same(f(make()), cf(make()))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_compiled_2d_abs_matches_eager(backend, dtype):
    # Compiled code picks the loop the eager kernels pick for the same strides (equal to
    # NumPy's in these cases but the xfail below).
    z, _ = _differing(dtype)
    x = z.reshape(4, 4)
    for f in (lambda a: np.abs(a), lambda a: np.abs(a.T), lambda a: np.abs(a[::-1]), lambda a: np.abs(a[:, ::-1]),
              lambda a: np.abs(a[::-1, ::-1]), lambda a: np.abs(a.T[::-1])):
        npc.compiler.reset()
        _same(f(npc.asarray(x)), npc.compile(f, backend=backend)(x))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_eager_2d_fully_reversed(dtype):
    # One run of memory walked backwards: NumPy's scalar loop, as for a 1-D reversed view.
    z, _ = _differing(dtype)
    x = z.reshape(4, 4)
    _same(np.abs(x[::-1, ::-1]), npc.abs(npc.asarray(x)[::-1, ::-1]))


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("view", ["rows_reversed", "F_reversed", "reversed_block"])
def test_eager_2d_reversed_inner_axis(dtype, view):
    # Note [buffered operands] in src/ops/kernels_arith.cpp: a view that does not walk as one
    # run is buffered forwards by NumPy's iterator (its SIMD loop); was the scalar loop.
    z, _ = _differing(dtype)
    x = z.reshape(4, 4)
    f = {"rows_reversed": lambda a: np.abs(a[:, ::-1]), "F_reversed": lambda a: np.abs(a.T[::-1]),
         "reversed_block": lambda a: np.abs(a[::-1, ::-1][:, :3])}[view]
    _same(f(x), f(npc.asarray(x)))
    for backend in BACKENDS:
        npc.compiler.reset()
        _same(f(x), npc.compile(f, backend=backend)(x))


@pytest.mark.parametrize("backend", ["npc"] + BACKENDS)
def test_complex64_products_of_2d_views(backend):
    # Note [buffered operands]: an operand no single stride walks is buffered forwards; one
    # that a single (negative) stride walks keeps it, so the product is the scalar one.
    z, w = _differing(np.complex64, 16)
    x, y = z.reshape(4, 4), w.reshape(4, 4)
    cases = [lambda a, b: a[:, ::-1] * b[:, ::-1], lambda a, b: a[:, ::-1] * np.ascontiguousarray(b),
             # rows of b 8 elements apart: no single stride walks b, one walks a
             lambda a, b: a[::-1, ::-1][:2] * np.concatenate([b, b], axis=1)[:2, :4],
             lambda a, b: a[::-1, ::-1] * b]
    for f in cases:
        want = f(x, y)
        if backend == "npc":
            got = f(npc.asarray(x), npc.asarray(y))
        else:
            npc.compiler.reset()
            got = npc.compile(f, backend=backend)(x, y)
        _same(want, got)


def _imul_operator(a, b):
    a[0, ::-1] *= b
    return a


def _imul_ufunc(a, b):
    v = a[0, ::-1]
    np.multiply(v, b, out=v)
    return a


@pytest.mark.parametrize("f", [_imul_operator, _imul_ufunc])
@pytest.mark.parametrize("scalar", [False, True])
def test_complex64_in_place_products_of_reversed_views(f, scalar):
    # Fuzzer seed 1300856: NumPy's in-place product over a reversed view walks input and out=
    # backwards with its SIMD loop (Note [loops by stride sign]); `a[0, ::-1] *= 255` took the
    # scalar product (its overflow of 3.4e38 * 255, NaNs of the SIMD one) on npc's fast path.
    z, w = _differing(np.complex64, 16)
    x = z.reshape(2, 8)
    b = np.complex64(w[0]) if scalar else w[:8][::-1].copy()
    _same(f(x.copy(), b), f(npc.asarray(x.copy()), b))
    big = np.full((4, 5), 1 + 1j, np.complex64)
    big[0] = [complex(np.inf, 1), -3 - 2j, 4 - 1j, complex(3.4028234663852886e+38, np.nan), -1.5 + 3.5j]
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        exp = f(big.copy(), 255)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        res = f(npc.asarray(big.copy()), 255)
    _same(exp, res)
    if AVX512_LOOPS:
        assert [str(m.message) for m in got] == [str(m.message) for m in want]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_compiled_0d_abs(backend, dtype):
    # Fuzzer seed 50435: np.minimum of 0-d arrays is a NumPy scalar, and abs() of it is
    # NumPy's scalar arithmetic (npy_cabs = hypot); abs() of a 0-d array is its SIMD loop.
    z, _ = _differing(dtype)
    one = np.array(1, np.uint8)

    def of_scalar(a, b):
        return abs(np.minimum(a, b))

    def of_0d_array(a, b):
        return abs(np.minimum(a, b, out=np.empty((), a.dtype)))

    def np_abs_of_scalar(a, b):
        return np.abs(np.minimum(a, b))

    for f in (of_scalar, of_0d_array, np_abs_of_scalar):
        npc.compiler.reset()
        cf = npc.compile(f, backend=backend)
        for k in range(4):
            a = np.array(z[k])
            _same(f(a, one), cf(a.copy(), one))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_compiled_scalar_arithmetic(backend, dtype):
    # Elements of a vector are NumPy scalars: abs() and `*` of them are NumPy's scalar
    # arithmetic (hypot, the schoolbook product); np.abs and np.multiply its SIMD loops.
    z, w = _differing(dtype)
    n = 8

    def f(a, b):
        return ([abs(a[k]) for k in range(n)] + [a[k] * b[k] for k in range(n)] +
                [np.abs(a[k]) for k in range(n)] + [np.multiply(a[k], b[k]) for k in range(n)])

    npc.compiler.reset()
    cf = npc.compile(f, backend=backend)
    for _ in range(2):
        exp, got = f(z, w), cf(z.copy(), w.copy())
        assert len(exp) == len(got)
        for e, g in zip(exp, got):
            _same(e, g)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_compiled_products_by_stride(backend, dtype):
    # complex64 products over a negative stride are NumPy's scalar loop (the schoolbook
    # product); complex128 ones stay vectorised (Note [complex product]).
    z, w = _differing(dtype)
    for f in (lambda a, b: a * b, lambda a, b: a[::-1] * b, lambda a, b: np.square(a[::-1]),
              lambda a, b: np.square(a)):
        npc.compiler.reset()
        _same(f(z, w), npc.compile(f, backend=backend)(z.copy(), w.copy()))


OUT_CASES = {
    "abs reversed into reversed": lambda a, b: np.abs(a[::-1], out=np.empty(a.shape, a.real.dtype)[::-1]),
    "abs into reversed": lambda a, b: np.abs(a, out=np.empty(a.shape, a.real.dtype)[::-1]),
    "product into reversed": lambda a, b: np.multiply(a, b, out=np.empty_like(a)[::-1]),
    "product of reversed into reversed": lambda a, b: np.multiply(a[::-1], b[::-1], out=np.empty_like(a)[::-1]),
    "product of reversed": lambda a, b: a[::-1] * b[::-1],
    "square of reversed into reversed": lambda a, b: np.square(a[::-1], out=np.empty_like(a)[::-1]),
}


@pytest.mark.parametrize("mode", ["npc", "eager", "fused"])
@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("case", list(OUT_CASES))
def test_loops_by_stride_sign_with_out(mode, dtype, case):
    # Note [loops by stride sign] in src/ops/kernels_arith.cpp: a loop whose operands all step
    # backwards runs forwards (SIMD); a reversed out= alone keeps the SIMD product.
    z, w = _differing(dtype)
    f = OUT_CASES[case]
    if mode == "npc":
        got = f(npc.asarray(z), npc.asarray(w))
    else:
        npc.compiler.reset()
        got = npc.compile(f, backend=mode)(z.copy(), w.copy())
    _same(f(z, w), got)

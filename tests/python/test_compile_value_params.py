"""Float and complex constants of fused kernels are launch parameters (Note [generic kernels]
in src/fusion/kernel_params.cpp): a traced Python loop whose coefficients change with the
iteration compiles one kernel, not one per iteration, and computes NumPy's values; zero and
powers of two stay literals of the kernel's text."""
import numpy as np
import pytest

import npc
from npc import compiler

from _fused_source import compiled_source_and_result


@pytest.fixture(autouse=True)
def _fresh(tmp_path):
    with npc.config.patch(codegen_errors="raise", cache_dir=str(tmp_path / "cache"), eager_if_faster=False):
        compiler.reset()
        npc._fusion.clear_cache()
        yield
        compiler.reset()


def _loop(dtype, n):
    def f(x):
        out = x * 0
        for k in range(n):
            c = dtype(0.3) * np.cos(dtype(k) * dtype(0.7)) + dtype(0.1)
            out = out + c * x  # one segment per iteration: the sum is read below
            if float(out.real.sum() if np.iscomplexobj(out) else out.sum()) > 1e300:
                break
        return out
    return f


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
def test_loop_varying_constants_compile_one_kernel(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000).astype(dtype)
    if np.iscomplexobj(x):
        x = x + 1j * rng.standard_normal(1000).astype(x.real.dtype)
    counts = []
    for n in (3, 9):
        f = _loop(dtype, n)
        cf = npc.compile(f, backend="fused")
        before = npc._fusion.stats()["compiles"]
        got = cf(x)
        counts.append(npc._fusion.stats()["compiles"] - before)
        want = f(x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert len(cf.last_breaks) == n
    assert counts[1] == 0, counts  # the longer loop reuses the shorter one's kernels


@pytest.mark.parametrize("c, literal", [
    (0.7071067811865476, False), (3.0, False), (0.5, True), (-4.0, True), (0.0, True),
    (complex(0.6, 0.8), False), (complex(2.0, -0.5), True), (float("inf"), True),
])
def test_which_constants_are_parameters(c, literal, capfd):
    x = np.linspace(-2, 2, 64)

    def f(x):
        return x * c + 1.25 * x

    got, src = compiled_source_and_result(f, (x,), capfd)
    np.testing.assert_array_equal(got, f(x))
    assert ("npk_f" in src.split("npk::ufunc::multiply", 1)[1].split(")", 1)[0]) != literal, src[:3000]


def test_division_by_a_parameter_raises_as_numpy():
    # A constant computed at run time raises its floating-point errors as NumPy's loop does.
    x = np.array([1e308, 1.0, 0.0])

    def f(x):
        return x * 3.0 + x / 3.0

    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            f(x)
        with pytest.raises(FloatingPointError):
            npc.compile(f, backend="fused")(x)


def test_float32_square_by_a_python_float_stays_exact():
    # 2.0 cast into a float32 loop is a power of two: a literal, so x ** 2.0 is x * x as NumPy's.
    x = np.random.default_rng(5).standard_normal(5000).astype(np.float32)
    f = npc.compile(lambda x: x ** 2.0, backend="fused")
    np.testing.assert_array_equal(f(x), x ** 2.0)


@pytest.mark.parametrize("bits", [0xFFF8000000000000, 0x7FF8000000012345, 0xFFF0000000000BAD])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nan_constants_keep_sign_and_payload(bits, dtype):
    c = np.array([bits], np.uint64).view(np.float64)[0]
    x = np.array([1.0, 2.0, -3.0], dtype)

    def f(x):
        return x + c

    with np.errstate(invalid="ignore"):  # a signalling NaN raises "invalid" in both
        want = f(x)
        got = npc.compile(f, backend="fused")(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint64 if dtype == np.float64 else np.uint32),
                                  want.view(np.uint64 if dtype == np.float64 else np.uint32))

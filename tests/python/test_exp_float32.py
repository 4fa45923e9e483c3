"""float32 exp is one vectorizable rule, npk::exp_f32 (Note [float32 exp] in
include/npc/scalar_rules.hpp), shared by the eager loop and fused kernels.

Checked here: its values against NumPy's over the whole float32 range (within the bound of
tests/numpy_conformance/ulp_tolerances.csv), the special values and the floating-point errors
NumPy raises (overflow above 88.72, underflow for results that flush to 0, nothing for NaN and
the infinities), eager == compiled bit for bit, and float16 (computed through it) against NumPy.
"""
import warnings

import numpy as np
import pytest

import npc

from _ulps import assert_close

BACKENDS = ["eager", "fused"]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path):
    with npc.config.patch(cache_dir=str(tmp_path), codegen_errors="raise"):
        yield


def run(backend, x):
    if backend == "eager":
        return np.asarray(np.exp(npc.asarray(x)))
    return np.asarray(npc.compile(lambda a: np.exp(a), backend=backend)(x))


def sweep(n=200_001):
    """Every binade that exp maps to a finite nonzero float32, densely, and a few beyond."""
    x = np.linspace(-110.0, 90.0, n).astype(np.float32)
    tiny = (np.random.default_rng(1).standard_normal(5000) * 1e-3).astype(np.float32)
    return np.concatenate([x, tiny, np.float32([0.0, -0.0, 1e-40, -1e-40, 88.72283, 88.72284, -87.33654])])


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_within_bound_of_numpy(backend):
    x = sweep()
    with np.errstate(all="ignore"):
        want = np.exp(x)
        got = run(backend, x)
    assert_close("exp", want, got)


@pytest.mark.parametrize("backend", BACKENDS)
def test_eager_and_compiled_bits_are_one_rule(backend):
    x = sweep()
    with np.errstate(all="ignore"):
        assert run(backend, x).tobytes() == run("eager", x).tobytes()
        assert run(backend, x[::-3]).tobytes() == np.asarray(np.exp(npc.asarray(x)[::-3])).tobytes()


CASES = [
    # (inputs, NumPy's error kinds), each a full vector of 17 so SIMD and tail lanes both run
    ([np.nan], set()),
    ([np.inf], set()),
    ([-np.inf], set()),
    ([0.0, 1.0, -1.0, 80.0, -80.0], set()),
    ([89.0], {"overflow"}),
    ([1e30], {"overflow"}),
    ([-104.0], {"underflow"}),
    ([-1e30], {"underflow"}),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("vals,errors", CASES, ids=[str(c[0]) for c in CASES])
def test_special_values_and_errors_as_numpy(backend, vals, errors):
    x = np.resize(np.float32(vals), 17)
    with np.errstate(all="ignore"):
        want = np.exp(x)
    for kind in ("over", "under", "invalid", "divide"):
        name = {"over": "overflow", "under": "underflow"}.get(kind, kind)
        with np.errstate(**{kind: "raise"}):
            if name in errors:
                with pytest.raises(FloatingPointError):
                    np.exp(x)
                with pytest.raises(FloatingPointError):
                    run(backend, x)
            else:
                np.exp(x)
                assert_close("exp", want, run(backend, x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_default_warnings_as_numpy(backend):
    x = np.float32([np.inf, -np.inf, np.nan, 89.0, -120.0, 1.0] * 3)
    with warnings.catch_warnings(record=True) as want_w:
        warnings.simplefilter("always")
        want = np.exp(x)
    with warnings.catch_warnings(record=True) as got_w:
        warnings.simplefilter("always")
        got = run(backend, x)
    assert_close("exp", want, got)
    assert [str(w.message) for w in got_w] == [str(w.message) for w in want_w]


@pytest.mark.parametrize("backend", BACKENDS)
def test_float16_is_numpys(backend):
    x = np.linspace(-20, 12, 50_001).astype(np.float16)
    x = np.concatenate([x, np.float16([np.nan, np.inf, -np.inf, 11.1, -17.5, 0.0])])
    with np.errstate(all="ignore"):
        want = np.exp(x)
        got = run(backend, x)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)

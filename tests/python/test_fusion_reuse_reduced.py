"""A value a fused reduction loop computes and the loop after it stores again (softmax's
exp) is computed once (Note [reuse of reduced values] in src/fusion/kir_passes.cpp): results
bit for bit those of the two halves compiled apart, the op once in the kernel text."""
import os

import numpy as np
import pytest

import npc

from _fused_source import compiled_source_and_result


@pytest.fixture(autouse=True)
def _raise_and_private_cache(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-reuse")
    npc.compiler.reset()
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def shifted(x):
    return np.exp(x - x.max(axis=1, keepdims=True))


def normalised(e):
    return e / e.sum(axis=1, keepdims=True)


def two_shifts(x):
    # The loop after the sum stores exp(x - min), not the exp(x - max) that the sum adds.
    e = np.exp(x - x.max(axis=1, keepdims=True))
    f = np.exp(x - x.min(axis=1, keepdims=True))
    return f / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7, 1000), (3, 257), (2, 255), (4, 256), (1, 5000)])
def test_softmax_computes_exp_once_with_the_same_bits(shape, dtype, capfd):
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    got, src = compiled_source_and_result(softmax, (x,), capfd)
    # float32 rows sum in blocks (Note [summation] in lower_reduce.cpp): the exp is stored
    # from the element loop inside the block loop.
    assert src.count("exp<") <= 2, src  # the serial and the parallel copy of the kernel, once each
    want = npc.compile(normalised)(npc.compile(shifted)(x))
    if dtype == np.float32:
        assert got.tobytes() == np.asarray(want).tobytes()
    np.testing.assert_allclose(got, softmax(x), rtol=1e-6 if dtype == np.float32 else 1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_different_values_from_outside_the_loop_are_not_reused(dtype, capfd):
    x = np.random.default_rng(2).standard_normal((5, 600)).astype(dtype)
    got, _ = compiled_source_and_result(two_shifts, (x,), capfd)
    np.testing.assert_allclose(got, two_shifts(x), rtol=1e-6 if dtype == np.float32 else 1e-14)

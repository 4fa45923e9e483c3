"""complex128 values narrowed to complex64 and widened again inside one fused kernel round
each part to float32 as NumPy does (Note [narrowed complex parts] in npc/scalar_rules.hpp):
GCC's basic-block vectorizer had folded the round trip away, so `S += Y; S += Z` with a
complex64 S gave S + Y + Z unrounded. Compared with NumPy bit for bit, over shape kinds."""
import numpy as np
import pytest

from _compile_diff import BACKENDS, check


def twice_in_place(S, Y, Z):
    S += Y
    S += Z
    return S


def through_complex64(S, Y, Z):
    t = (S + Y).astype(np.complex64)
    return (t * Z).astype(np.complex64) - Y


def accumulate(S, Y, Z):
    for k in range(4):
        S += Y * (k + 0.5) - Z
    return S


def _args(shape, seed=0):
    rng = np.random.default_rng(seed)

    def c128(s):
        return rng.standard_normal(s) + 1j * rng.standard_normal(s)

    return c128(shape).astype(np.complex64), c128(shape), c128(shape)


SHAPES = {
    "0-d": lambda: _args(()),
    "empty": lambda: _args((0, 3)),
    "vector": lambda: _args((37,)),
    "matrix": lambda: _args((9, 13)),
    "broadcast": lambda: (_args((6, 5))[0], _args((5,), 1)[1], _args((6, 1), 2)[2]),
    "non-contiguous": lambda: tuple(a[:, ::2] for a in _args((7, 12))),
    "negative strides": lambda: tuple(a[::-1] for a in _args((23,))),
}


@pytest.mark.parametrize("fn", [twice_in_place, through_complex64, accumulate])
@pytest.mark.parametrize("kind", list(SHAPES))
@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_round_trips_round_as_numpy(fn, kind, backend):
    args = SHAPES[kind]()
    assert args[0].shape == np.broadcast_shapes(*(a.shape for a in args))  # S takes the updates
    check(fn, args, args, backend=backend)


def test_the_round_trip_is_not_the_identity():
    """The data above does round: NumPy's result differs from the unrounded sum."""
    S, Y, _ = _args((37,))
    rounded = twice_in_place(S.copy(), Y, -Y)
    assert not np.array_equal(rounded, S)

"""NEP 50 promotion: npc.result_type / promote_types / can_cast against NumPy's, every pair."""
import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st

import npc
from dtypes import NATIVE

PAIRS = list(itertools.product(NATIVE, NATIVE))
CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]
PY_SCALARS = [True, 3, -7, 2.5, float("nan"), 1 + 2j]


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_promote_types_every_pair(a, b):
    assert npc.promote_types(a, b) == np.promote_types(a, b)
    assert npc.result_type(a, b) == np.result_type(a, b)


@pytest.mark.parametrize("casting", CASTINGS)
def test_can_cast_every_pair(casting):
    for a, b in PAIRS:
        assert npc.can_cast(a, b, casting) == np.can_cast(a, b, casting), (a, b, casting)


@pytest.mark.parametrize("dt", NATIVE, ids=str)
@pytest.mark.parametrize("scalar", PY_SCALARS, ids=repr)
def test_weak_python_scalars(dt, scalar):
    arr_np = np.zeros(3, dt)
    arr_npc = npc.zeros(3, dt)
    assert npc.result_type(arr_npc, scalar) == np.result_type(arr_np, scalar)
    assert npc.result_type(scalar, arr_npc) == np.result_type(scalar, arr_np)
    # 0-d arrays and NumPy scalars are strong under NEP 50
    assert npc.result_type(npc.zeros((), dt), scalar) == np.result_type(np.zeros((), dt), scalar)
    assert npc.result_type(dt.type(0), scalar) == np.result_type(dt.type(0), scalar)


def test_only_python_scalars():
    for combo in itertools.product(PY_SCALARS, repeat=2):
        assert npc.result_type(*combo) == np.result_type(*combo), combo


def test_errors_match_numpy():
    with pytest.raises(ValueError):
        npc.result_type()
    with pytest.raises(TypeError):
        npc.promote_types("float64", "notadtype")
    with pytest.raises(TypeError):
        npc.can_cast(3, np.int8)
    with pytest.raises(ValueError):
        npc.can_cast(np.int8, np.int16, "sometimes")


def test_non_native_dtypes_promote_like_numpy():
    assert npc.promote_types("U3", "U5") == np.promote_types("U3", "U5")
    assert npc.result_type(np.array(["a"]), np.array(["bcd"])) == np.result_type(np.array(["a"]), np.array(["bcd"]))
    assert npc.can_cast("i4", "U11") == np.can_cast("i4", "U11")


operand = st.one_of(
    st.sampled_from(NATIVE).map(lambda d: ("array", d)),
    st.sampled_from(NATIVE).map(lambda d: ("zerod", d)),
    st.sampled_from(NATIVE).map(lambda d: ("scalar", d)),
    st.sampled_from(NATIVE).map(lambda d: ("dtype", d)),
    st.sampled_from(PY_SCALARS).map(lambda v: ("python", v)),
)


def _make(lib, kind, v):
    if kind == "array":
        return lib.ones(2, v)
    if kind == "zerod":
        return lib.ones((), v)
    if kind == "scalar":
        return v.type(1)
    if kind == "dtype":
        return v
    return v


@given(st.lists(operand, min_size=1, max_size=5))
def test_result_type_mixtures(ops):
    expected = np.result_type(*[_make(np, k, v) for k, v in ops])
    assert npc.result_type(*[_make(npc, k, v) for k, v in ops]) == expected

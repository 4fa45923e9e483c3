"""Regression tests of the shape layer against NumPy: insert with one-element index arrays,
float arguments (repeat, split, roll), unsafe pad constants, stack of a generator, the
64-dimension limit and oversized repeats."""
import numpy as np
import pytest

import npc

from _diff import check


def same_error(fn):
    with pytest.raises(Exception) as ne:
        fn(np)
    with pytest.raises(type(ne.value)) as pe:
        fn(npc)
    assert str(pe.value) == str(ne.value)


@pytest.mark.parametrize("obj", [[1], 1, [1, 2], [-1], np.array([3]), [5]], ids=str)
@pytest.mark.parametrize("values", [[9, 8], 9, [9], [9, 8, 7], [[9, 8]]], ids=str)
def test_insert_1d(obj, values):
    check(lambda lib: lib.insert(lib.arange(5), obj, values))


@pytest.mark.parametrize("obj", [[1], 1, [0, 2]], ids=str)
@pytest.mark.parametrize("values", [[9, 8], [[9], [8]], 7], ids=str)
@pytest.mark.parametrize("axis", [0, 1])
def test_insert_2d(obj, values, axis):
    check(lambda lib: lib.insert(lib.arange(6).reshape(2, 3), obj, values, axis=axis))


def test_insert_2d_index_array():
    same_error(lambda lib: lib.insert(lib.arange(5), lib.array([[1]]), 9))


@pytest.mark.parametrize("repeats", [2.0, 2.5, np.float64(2.5), [1.5, 1, 1], [2.0], [True, False, True],
                                     "arr_float", "arr0_float", np.uint64(2)], ids=str)
def test_repeat_float_counts(repeats):
    def f(lib):
        r = {"arr_float": lib.array([1.5, 1, 1]), "arr0_float": lib.array(2.0)}.get(repeats, repeats) \
            if isinstance(repeats, str) else repeats
        return lib.repeat(lib.arange(3), r)
    check(f)


def test_repeat_too_big():
    same_error(lambda lib: lib.repeat(lib.arange(3), 2**61))
    same_error(lambda lib: lib.repeat(lib.arange(3), [2**61, 2**61, 2**61]))


@pytest.mark.parametrize("fn", ["split", "array_split"])
@pytest.mark.parametrize("sections", [2.0, 2.5, np.float64(3.0), "arr0"], ids=str)
def test_split_float_sections(fn, sections):
    def f(lib):
        s = lib.array(2.0) if isinstance(sections, str) else sections
        return getattr(lib, fn)(lib.arange(6), s)
    check(f)


@pytest.mark.parametrize("shift", [1.5, [1.5], np.float64(-2.0), True], ids=str)
@pytest.mark.parametrize("axis", [None, 0])
def test_roll_float_shift(shift, axis):
    check(lambda lib: lib.roll(lib.arange(6), shift, axis=axis))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int32, np.float32])
@pytest.mark.parametrize("cv", [-1, 300, 1.7, (-1, 256)], ids=str)
def test_pad_constant_unsafe_cast(dtype, cv):
    with np.errstate(all="ignore"):
        check(lambda lib: lib.pad(lib.arange(3, dtype=dtype), 1, constant_values=cv))


def test_stack_generator():
    same_error(lambda lib: lib.stack(x for x in [[1], [2]]))
    check(lambda lib: lib.stack([[1], [2]]))


def test_max_dimensions():
    same_error(lambda lib: lib.ones(1).reshape((1,) * 65))
    same_error(lambda lib: lib.expand_dims(lib.ones((1,) * 64), 0))
    same_error(lambda lib: lib.broadcast_to(1, (1,) * 65))
    check(lambda lib: lib.ones(1).reshape((1,) * 64))

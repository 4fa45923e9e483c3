"""Shape manipulation and joining vs NumPy: values, dtypes, shapes, view-ness, errors,
over every native dtype and the shape kinds (0-d, empty, non-contiguous, negative strides)."""
import numpy as np
import pytest

import npc

from _diff import DTYPES, LAYOUTS, check, values

SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]

CASES = {
    "reshape": lambda m, a: m.reshape(a, -1),
    "reshape_F": lambda m, a: m.reshape(a, (a.size,), order="F"),
    "ravel": lambda m, a: m.ravel(a),
    "ravel_F": lambda m, a: m.ravel(a, "F"),
    "ravel_K": lambda m, a: m.ravel(a, "K"),
    "flatten": lambda m, a: a.flatten(),
    "transpose": lambda m, a: m.transpose(a),
    "T": lambda m, a: a.T,
    "swapaxes": lambda m, a: m.swapaxes(a, 0, -1),
    "moveaxis": lambda m, a: m.moveaxis(a, 0, -1),
    "rollaxis": lambda m, a: m.rollaxis(a, -1),
    "expand_dims": lambda m, a: m.expand_dims(a, (0, -1)),
    "squeeze": lambda m, a: m.squeeze(m.expand_dims(a, 0)),
    "squeeze_axis": lambda m, a: m.squeeze(a, 0),
    "broadcast_to": lambda m, a: m.broadcast_to(a, (2,) + a.shape),
    "broadcast_arrays": lambda m, a: m.broadcast_arrays(a, m.ones((2,) + (1,) * a.ndim, dtype=a.dtype)),
    "atleast_1d": lambda m, a: m.atleast_1d(a),
    "atleast_2d": lambda m, a: m.atleast_2d(a),
    "atleast_3d": lambda m, a: m.atleast_3d(a),
    "concatenate": lambda m, a: m.concatenate([a, a]),
    "concatenate_last": lambda m, a: m.concatenate([a, a, a], axis=-1),
    "concatenate_none": lambda m, a: m.concatenate([a, a], axis=None),
    "concatenate_dtype": lambda m, a: m.concatenate([a, a], axis=None, dtype=np.complex128),
    "stack": lambda m, a: m.stack([a, a]),
    "stack_last": lambda m, a: m.stack([a, a], axis=-1),
    "vstack": lambda m, a: m.vstack([a, a]),
    "hstack": lambda m, a: m.hstack([a, a]),
    "dstack": lambda m, a: m.dstack([a, a]),
    "column_stack": lambda m, a: m.column_stack([a, a]),
    "block": lambda m, a: m.block([[a, a], [a, a]]) if a.ndim >= 1 else m.block([a, a]),
    "split": lambda m, a: m.split(a, [1, 2]),
    "split_eq": lambda m, a: m.split(a, 1, axis=-1),
    "array_split": lambda m, a: m.array_split(a, 3),
    "hsplit": lambda m, a: m.hsplit(a, [1]),
    "vsplit": lambda m, a: m.vsplit(a, [1]),
    "dsplit": lambda m, a: m.dsplit(a, [1]),
    "tile": lambda m, a: m.tile(a, 2),
    "tile2": lambda m, a: m.tile(a, (2, 1, 2)),
    "repeat": lambda m, a: m.repeat(a, 2),
    "repeat_axis": lambda m, a: m.repeat(a, 2, axis=0),
    "flip": lambda m, a: m.flip(a),
    "flip0": lambda m, a: m.flip(a, 0),
    "fliplr": lambda m, a: m.fliplr(a),
    "flipud": lambda m, a: m.flipud(a),
    "roll": lambda m, a: m.roll(a, 2),
    "roll_axis": lambda m, a: m.roll(a, -1, axis=0),
    "roll_axes": lambda m, a: m.roll(a, (1, 2), axis=(0, -1)),
    "rot90": lambda m, a: m.rot90(a),
    "rot90_3": lambda m, a: m.rot90(a, 3),
    "pad": lambda m, a: m.pad(a, 1),
    "pad_const": lambda m, a: m.pad(a, ((1, 2),) * a.ndim, constant_values=3),
    "pad_edge": lambda m, a: m.pad(a, 2, mode="edge"),
    "pad_reflect": lambda m, a: m.pad(a, 4, mode="reflect"),
    "pad_symmetric": lambda m, a: m.pad(a, 5, mode="symmetric"),
    "pad_wrap": lambda m, a: m.pad(a, 7, mode="wrap"),
    "resize": lambda m, a: m.resize(a, (3, 5)),
    "append": lambda m, a: m.append(a, a),
    "append_axis": lambda m, a: m.append(a, a, axis=0),
    "insert": lambda m, a: m.insert(a, 1, 0),
    "insert_many": lambda m, a: m.insert(a, [0, 2, 2], 1),
    "insert_axis": lambda m, a: m.insert(a, 1, a[0] if a.ndim else 0, axis=0),
    "delete": lambda m, a: m.delete(a, 0),
    "delete_many": lambda m, a: m.delete(a, [0, 2], axis=-1),
    "delete_slice": lambda m, a: m.delete(a, slice(None, None, 2), axis=0),
    "trim_zeros": lambda m, a: m.trim_zeros(a),
    "trim_zeros_f": lambda m, a: m.trim_zeros(a, "f"),
    "diagonal": lambda m, a: m.diagonal(a),
    "diagonal_off": lambda m, a: m.diagonal(a, -1, 0, -1),
    "unstack": lambda m, a: m.unstack(a),
    "matrix_transpose": lambda m, a: m.matrix_transpose(a),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(CASES))
def test_shape_functions(name, shape):
    for layout in LAYOUTS:
        check(CASES[name], values(shape, np.int32), layout=layout)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["ravel_K", "swapaxes", "concatenate", "stack", "tile2", "repeat_axis", "flip",
                                  "roll_axes", "pad_reflect", "pad_const", "insert_many", "delete_many", "split",
                                  "trim_zeros"])
def test_shape_functions_every_dtype(name, dtype):
    check(CASES[name], values((3, 4), dtype), layout="reversed")
    check(CASES[name], values((3, 4), dtype), layout="strided")


def test_concatenate_mixed_dtypes_and_out():
    for dts in [(np.int8, np.uint8), (np.float32, np.int64), (np.bool_, np.float16), (np.complex64, np.float64)]:
        check(lambda m, a, b: m.concatenate([a, b]), values((3,), dts[0]), values((2,), dts[1]))
    check(lambda m, a, b: m.concatenate([a, b], dtype=np.int64), values((3,), np.float64), values((2,), np.int8))
    check(lambda m, a, b: m.concatenate([a, b], dtype=np.int64, casting="unsafe"), values((3,), np.float64),
          values((2,), np.int8))

    def with_out(m, a, b):
        out = m.zeros(5, dtype=np.float64)
        r = m.concatenate([a, b], out=out)
        assert r is out
        return out
    check(with_out, values((3,), np.int16), values((2,), np.float32))


@pytest.mark.parametrize("fn", [
    lambda m: m.concatenate([]),
    lambda m: m.concatenate([m.zeros(()), m.zeros(())]),
    lambda m: m.concatenate([m.zeros((2, 3)), m.zeros(3)]),
    lambda m: m.concatenate([m.zeros((2, 3)), m.zeros((2, 4))]),
    lambda m: m.concatenate([m.zeros(3)], axis=1),
    lambda m: m.concatenate([m.zeros(3), m.zeros(3)], out=m.zeros(5)),
    lambda m: m.stack([m.zeros(3), m.zeros(4)]),
    lambda m: m.squeeze(m.zeros((2, 1)), axis=0),
    lambda m: m.expand_dims(m.zeros(3), (0, 0)),
    lambda m: m.expand_dims(m.zeros(3), 3),
    lambda m: m.moveaxis(m.zeros((2, 3)), [0], [0, 1]),
    lambda m: m.repeat(m.zeros(3), [1, 2]),
    lambda m: m.repeat(m.zeros(3), -1),
    lambda m: m.swapaxes(m.zeros(3), 0, 1),
    lambda m: m.split(m.arange(5), 2),
    lambda m: m.broadcast_to(m.zeros(3), (4,)),
    lambda m: m.broadcast_shapes((2, 3), (3, 2)),
    lambda m: m.reshape(m.zeros(6), (4, -1)),
    lambda m: m.diagonal(m.zeros(3)),
    lambda m: m.pad(m.zeros(0), 1, mode="reflect"),
])
def test_shape_errors(fn):
    try:
        fn(np)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as info:
            fn(npc)
        assert str(info.value) == str(e)
        return
    pytest.fail("NumPy did not raise")


def test_broadcast_shapes():
    assert npc.broadcast_shapes((2, 1), (3,), ()) == np.broadcast_shapes((2, 1), (3,), ())
    assert npc.broadcast_shapes(5, (1, 5)) == np.broadcast_shapes(5, (1, 5))


def test_views_write_through():
    n = np.arange(24).reshape(2, 3, 4)
    p = npc.arange(24).reshape(2, 3, 4)
    for f in [lambda m, a: m.moveaxis(a, 0, -1), lambda m, a: m.flip(a, 1), lambda m, a: m.squeeze(a[:1]),
              lambda m, a: m.split(a, 3, axis=1)[1], lambda m, a: m.expand_dims(a, 1), lambda m, a: m.ravel(a)]:
        f(np, n)[(0,) * f(np, n).ndim] = -5
        f(npc, p)[(0,) * f(npc, p).ndim] = -5
        np.testing.assert_array_equal(np.asarray(p), n)


def test_copyto():
    for src, kw in [(values((3, 4), np.int16), {}), (values((4,), np.float32), {}), (2.5, {}),
                    (values((3, 4), np.float64), {"casting": "unsafe"}), (7, {"where": values((3, 4), np.bool_)})]:
        n = np.zeros((3, 4))
        p = npc.zeros((3, 4))
        np.copyto(n, src, **kw)
        npc.copyto(p, npc.asarray(src) if isinstance(src, np.ndarray) else src,
                   **{k: npc.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()})
        np.testing.assert_array_equal(np.asarray(p), n)
    with pytest.raises(TypeError):
        npc.copyto(npc.zeros(3, np.int32), npc.zeros(3))
    with pytest.raises(OverflowError):
        npc.copyto(npc.zeros(3, np.uint8), 300)


def test_shares_memory():
    p = npc.arange(10)
    assert npc.shares_memory(p[::2], p[2:])
    assert not npc.shares_memory(p[::2], p[1::2])
    assert npc.may_share_memory(p[::2], p[1::2])
    assert not npc.may_share_memory(p[:5], p[5:])

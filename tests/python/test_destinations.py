"""npc functions write into NumPy destination arrays (out=, copyto's dst, put, place,
fill_diagonal, putmask, put_along_axis) as NumPy does, unaligned and byte-swapped ones
included, and return the caller's own object (Note [subclass guard] in
python/npc/csrc/bind_interop.cpp)."""
import numpy as np
import pytest

import npc


def _dest(kind, shape=(4,), dtype="f8"):
    dtype = np.dtype(dtype)
    if kind == "plain":
        return np.zeros(shape, dtype)
    if kind == "unaligned":
        n = int(np.prod(shape))
        return np.frombuffer(bytearray(n * dtype.itemsize + 1), dtype, offset=1, count=n).reshape(shape)
    if kind == "swapped":
        return np.zeros(shape, dtype.newbyteorder())
    raise AssertionError(kind)


_WRITES = {
    "copyto": lambda m, d: m.copyto(d, m.arange(4.)),
    "copyto_where": lambda m, d: m.copyto(d, 7.0, where=m.arange(4) > 1),
    "put": lambda m, d: m.put(d, [0, 2], [5., 6.]),
    "place": lambda m, d: m.place(d, m.arange(4) % 2 == 0, [7., 8.]),
    "putmask": lambda m, d: m.putmask(d, m.arange(4) > 1, m.arange(4.)),
    "put_along_axis": lambda m, d: m.put_along_axis(d, m.asarray([1, 3]), 9., axis=0),
    "add_out": lambda m, d: m.add(m.arange(4.), 1, out=d),
    "add_positional_out": lambda m, d: m.add(m.arange(4.), 1, d),
    "sqrt_out": lambda m, d: m.sqrt(m.arange(4.), out=d),
    "cumsum_out": lambda m, d: m.cumsum(m.arange(4.), out=d),
    "accumulate_out": lambda m, d: m.add.accumulate(m.arange(4.), out=d),
    "clip_out": lambda m, d: m.clip(m.arange(4.), 1, 2, out=d),
    "around_out": lambda m, d: m.around(m.arange(4.) / 3, 1, out=d),
    "matmul_out": lambda m, d: m.matmul(m.ones((4, 4)), m.arange(4.), out=d),
    "dot_out": lambda m, d: m.dot(m.ones((4, 4)), m.arange(4.), out=d),
    "take_out": lambda m, d: m.take(m.arange(8.), [1, 3, 5, 7], out=d),
}


@pytest.mark.parametrize("kind", ["plain", "unaligned", "swapped"])
@pytest.mark.parametrize("name", sorted(_WRITES))
def test_writes_into_numpy_destination(name, kind):
    fn = _WRITES[name]
    d_np, d_npc = _dest(kind), _dest(kind)
    try:
        e = fn(np, d_np)
    except Exception as ex:  # noqa: BLE001 (NumPy's outcome is the expectation)
        with pytest.raises(type(ex)):
            fn(npc, d_npc)
        return
    r = fn(npc, d_npc)
    np.testing.assert_array_equal(d_npc, d_np)
    assert d_npc.dtype == d_np.dtype
    if e is d_np:
        assert r is d_npc  # the caller's object, not a view of it
    else:
        assert r is None and e is None


def test_reduction_into_numpy_0d_out():
    o = np.zeros(())
    assert npc.sum(npc.arange(4.), out=o) is o and o == 6


def test_fill_diagonal_numpy_array():
    a, b = np.zeros((3, 3)), np.zeros((3, 3))
    npc.fill_diagonal(a, 2.0)
    np.fill_diagonal(b, 2.0)
    np.testing.assert_array_equal(a, b)


def test_divmod_into_numpy_outputs():
    o1, o2 = np.zeros(3), np.zeros(3)
    r = npc.divmod(npc.arange(3.), 2, out=(o1, o2))
    assert r[0] is o1 and r[1] is o2
    np.testing.assert_array_equal(o1, [0, 0, 1])


_METHODS = [("sum", (), ()), ("mean", (), ()), ("max", (), ()), ("min", (), ()), ("prod", (), ()),
            ("cumsum", (), (4,)), ("cumprod", (), (4,)), ("round", (), (4,)), ("clip", (0, 1), (4,)),
            ("take", ([0, 1, 2, 3],), (4,)), ("std", (), ()), ("var", (), ()), ("any", (), ()), ("all", (), ()),
            ("argmax", (), ()), ("argmin", (), ())]


@pytest.mark.parametrize("kind", ["plain", "unaligned", "swapped"])
@pytest.mark.parametrize("name, args, shape", _METHODS)
def test_method_out_numpy_destination(name, args, shape, kind):
    dt = "?" if name in ("any", "all") else ("i8" if name.startswith("arg") else "f8")
    d_np, d_npc = _dest(kind, shape, dt), _dest(kind, shape, dt)
    e = getattr(np.arange(4.), name)(*args, out=d_np)
    r = getattr(npc.arange(4.), name)(*args, out=d_npc)
    assert (r is d_npc) == (e is d_np)
    np.testing.assert_array_equal(d_npc, d_np)

"""Python subclasses of npc.ndarray follow NumPy's subclassing protocol (view(cls),
__new__ through the constructor or a view, __array_finalize__, info attributes, views,
slices, copies and ufunc/operator results keeping the class): each pattern is written once
and run for a subclass of numpy.ndarray and of npc.ndarray (Note [ndarray subclasses] in
python/npc/_array.py)."""
import numpy
import pytest

import npc

_EXPRS = ["r[1:]", "r[1:5:2]", "r.reshape(2, 3)", "r.reshape(2, 3)[0]", "r.T", "r[...]", "r + 1", "1 + r",
          "r * r", "-r", "abs(r)", "r == 1", "r[1:] + r[:-1]", "m.sqrt(r)", "m.add(r, 1)", "m.multiply(2, r)",
          "m.add(r[0:1].reshape(()), 1)", "r.view(Plain)", "r.view(m.ndarray)", "r.copy()", "r[::2].copy()",
          "r.astype(m.float32)", "r.view()"]


def _classes(m):
    class InfoArray(m.ndarray):
        """NumPy's documented pattern: __new__ through the constructor, info attribute."""

        def __new__(cls, shape, dtype=float, buffer=None, offset=0, strides=None, order=None, info=None):
            obj = super().__new__(cls, shape, dtype, buffer, offset, strides, order)
            obj.info = info
            return obj

        def __array_finalize__(self, obj):
            if obj is None:
                return
            self.info = getattr(obj, "info", None)

    class RealisticInfoArray(m.ndarray):
        """NumPy's documented pattern: __new__ through asarray(...).view(cls)."""

        def __new__(cls, input_array, info=None):
            obj = m.asarray(input_array).view(cls)
            obj.info = info
            return obj

        def __array_finalize__(self, obj):
            if obj is None:
                return
            self.info = getattr(obj, "info", None)

    class Plain(m.ndarray):
        pass

    return InfoArray, RealisticInfoArray, Plain


def _describe(v):
    name = type(v).__name__
    if name == "ndarray":
        name = "base"
    return name, getattr(v, "info", "-"), v.tolist() if hasattr(v, "tolist") else v


def _outcomes(m, expr):
    InfoArray, RealisticInfoArray, Plain = _classes(m)
    r = RealisticInfoArray(m.arange(6.), info="R")
    return _describe(eval(expr, {"m": m, "r": r, "Plain": Plain, "abs": abs}))


@pytest.mark.parametrize("expr", _EXPRS)
def test_subclass_results_as_numpy(expr):
    assert _outcomes(npc, expr) == _outcomes(numpy, expr)


def test_view_of_asarray():
    class MyArray(npc.ndarray):
        pass
    x = npc.arange(3.)
    v = npc.asarray(x).view(MyArray)
    assert type(v) is MyArray and v.tolist() == [0, 1, 2]
    assert isinstance(v, npc.ndarray) and v.base is x
    v[0] = 7.0
    assert x[0] == 7.0  # a view: shares memory


def test_constructor_calls_finalize_with_none():
    for m in (numpy, npc):
        seen = []

        class Rec(m.ndarray):
            def __array_finalize__(self, obj):
                seen.append(obj is None)

        a = Rec((3,))
        assert type(a) is Rec and a.shape == (3,)
        assert seen == [True]


def test_info_array_constructor():
    for m in (numpy, npc):
        InfoArray, _, _ = _classes(m)
        a = InfoArray((2, 2), info="I")
        assert type(a) is InfoArray and a.info == "I" and a.shape == (2, 2)
        assert a[0].info == "I"


def test_array_priority_decides_the_result_class():
    results = []
    for m in (numpy, npc):
        class Low(m.ndarray):
            __array_priority__ = 1.0

        class High(m.ndarray):
            __array_priority__ = 50.0

        lo, hi = m.arange(3.).view(Low), m.arange(3.).view(High)
        results.append((type(lo + hi).__name__, type(hi + lo).__name__, type(m.add(lo, hi)).__name__))
    assert results[0] == results[1]


def _pickling_class(m):
    class PicklingInfoArray(m.ndarray):
        """NumPy's documented pattern for pickling an attribute with the array."""

        def __new__(cls, input_array, info=None):
            obj = m.asarray(input_array).view(cls)
            obj.info = info
            return obj

        def __array_finalize__(self, obj):
            if obj is None:
                return
            self.info = getattr(obj, "info", None)

        def __reduce__(self):
            pickled_state = super().__reduce__()
            return (pickled_state[0], pickled_state[1], pickled_state[2] + (self.info,))

        def __setstate__(self, state):
            self.info = state[-1]
            super().__setstate__(state[0:-1])

    return PicklingInfoArray


PicklingNumpy = _pickling_class(numpy)
PicklingNpc = _pickling_class(npc)
PicklingNumpy.__qualname__ = PicklingNumpy.__name__ = "PicklingNumpy"  # picklable by name
PicklingNpc.__qualname__ = PicklingNpc.__name__ = "PicklingNpc"


def test_pickle_round_trip_of_subclass():
    import pickle
    for cls, m in ((PicklingNumpy, numpy), (PicklingNpc, npc)):
        a = cls(m.arange(6.).reshape(2, 3), info="P")
        b = pickle.loads(pickle.dumps(a))
        assert type(b) is cls and b.info == "P" and b.tolist() == a.tolist()


@pytest.mark.parametrize("expr", ["m.add(r, 1.0, dtype=m.float32)", "m.multiply(r, r, casting='unsafe')"])
def test_ufunc_with_keywords_keeps_subclass(expr):
    assert _outcomes(npc, expr) == _outcomes(numpy, expr)


@pytest.mark.parametrize("expr", ["r.reshape(2, 3).sum(axis=0)", "r.mean(axis=0)", "r.reshape(2, 3).max(axis=1)",
                                  "r.cumsum()", "r.clip(0, 1)", "r.round()", "r.argmax(axis=0)",
                                  "r.reshape(2, 3).argmax(axis=0)", "r.dot(r.T)", "r.reshape(2, 3).dot(r.reshape(3, 2))",
                                  "m.linalg.norm(r)", "r.reshape(2, 3).std(axis=1)", "r.var()", "r.take([0, 2])",
                                  "r.repeat(2)", "r.compress([1, 0, 1])", "r.sum()", "r.prod()", "r.max()", "r.min()",
                                  "r.any()", "r.all()", "r.round(1)", "r.round(-1)", "r.round(0)",
                                  "r.reshape(2, 3).trace()", "r.reshape(2, 3).dot(r.reshape(2, 3).T)"])
def test_methods_keep_subclass(expr):
    """Method results of a subclass instance (NumPy builds them through ufuncs) and NumPy
    calls on it (no endless hand-over between NumPy and npc)."""
    assert _outcomes(npc, expr) == _outcomes(numpy, expr)


@pytest.mark.parametrize("expr", ["m.sum(r, axis=0)", "m.sum(r)", "m.dot(r.reshape(2, 3), r.reshape(3, 2))",
                                  "m.add.reduce(r)", "m.add.reduce(r.reshape(2, 3))", "r.reshape(2, 3) @ r.reshape(2, 3).T",
                                  "r @ r", "m.add.accumulate(r)", "m.multiply.outer(r, r)", "m.mean(r)"])
def test_functions_keep_subclass(expr):
    """Public functions, ufunc methods and `@` on a subclass instance: results take the class
    as NumPy's do (Note [subclass results of functions] in python/npc/_interop.py; the wider
    comparison is tests/python/test_ndarray_subclass_functions.py)."""
    assert _outcomes(npc, expr) == _outcomes(numpy, expr)

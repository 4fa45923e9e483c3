"""npc.vectorize: numpy.vectorize whose results are npc arrays.

The element loop is NumPy's own (numpy.vectorize over ``numpy.frompyfunc``, or the
generalized-ufunc loop for ``signature=``): it calls a Python function per element, so
there is nothing for native kernels to gain, and its semantics (otypes, excluded, cache,
signature, the output dtype taken from the first call) stay exactly NumPy's. npc arrays
reach it as zero-copy NumPy views; the arrays it returns become npc arrays (non-native
dtypes such as object or str stay NumPy arrays, as everywhere in npc).
"""
import numpy as _np

from ._creation import _adopt

__all__ = ["vectorize"]


def _to_npc(r):
    if type(r) is _np.ndarray:
        return _adopt(r) if r.dtype.isnative and r.flags.aligned else r
    if type(r) is tuple:
        return tuple(_to_npc(x) for x in r)
    return r


class vectorize(_np.vectorize):
    """numpy.vectorize(pyfunc=np._NoValue, otypes=None, doc=None, excluded=None, cache=False,
    signature=None): a callable that maps `pyfunc` over the broadcast elements (or, with
    `signature`, the core sub-arrays) of its arguments.

    Same parameters, attributes (``pyfunc``, ``otypes``, ``excluded``, ``signature``,
    ``cache``, ``__doc__``), decorator forms and errors as numpy.vectorize. Results are npc
    arrays of the dtype NumPy gives (a 0-d array for scalar inputs, as NumPy; a tuple of
    arrays for functions with several outputs); object/str results stay NumPy arrays.
    """

    def __call__(self, *args, **kwargs):
        r = super().__call__(*args, **kwargs)
        if r is self:  # the decorator form: @vectorize(otypes=...) then the function
            return r
        return _to_npc(r)


vectorize.__module__ = "npc"

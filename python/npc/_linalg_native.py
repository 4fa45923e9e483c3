"""Native decompositions of numpy.linalg functions into npc primitives.

They run on npc's own kernels eagerly and, under ``npc.compile``, trace into the graph so
the fused backend can fuse them with their producers and consumers (k-means:
``argmin(norm(X - means[:, None], axis=2), axis=0)`` becomes one loop nest). npc.linalg
exposes them; arguments they do not cover go to NumPy's implementation.
"""
import operator

import numpy as _np

__all__ = ["norm"]


def _npc():
    import npc
    return npc


def norm(x, ord=None, axis=None, keepdims=False):
    """Matrix or vector norm; mirrors ``numpy.linalg.norm``.

    Native for the Euclidean/Frobenius cases NumPy special-cases: ``ord`` None (or 2 with
    one axis) over all axes, one axis or (for ord None) two axes, computed as NumPy does:
    ``sqrt(add.reduce((x.conj() * x).real, axis))`` (integer and boolean inputs are first
    cast to float64). Other orders run numpy.linalg.norm.

    Parameters
    ----------
    x : array_like
        Input array.
    ord : {None, 2, other}, optional
        Order of the norm (see numpy.linalg.norm).
    axis : None, int or tuple of ints, optional
        Axis or axes to reduce.
    keepdims : bool, optional
        Keep reduced axes with size 1.

    Returns
    -------
    ndarray or scalar
        Float dtype of x (float64 for integer/bool inputs; the real dtype for complex).

    Raises
    ------
    numpy.exceptions.AxisError
        For an axis out of range. ValueError for invalid `ord` (from NumPy).
    """
    npc = _npc()
    a = x if isinstance(x, npc.ndarray) else npc.asarray(x)
    if a.dtype.kind not in "fc":
        a = a.astype(_np.float64)
    axes = axis
    if axes is not None and not isinstance(axes, tuple):
        try:
            axes = (operator.index(axes),)
        except TypeError as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
    native = (ord is None and (axes is None or len(axes) in (1, 2))) or \
             (ord == 2 and axes is not None and len(axes) == 1)
    if not native:
        return _np.linalg.norm(_np.asarray(a), ord=ord, axis=axis, keepdims=keepdims)
    if axes is None:
        axes = tuple(range(a.ndim))
    if a.dtype.kind == "c":
        s = (npc.conjugate(a) * a).real
    else:
        s = a * a
    return npc.sqrt(npc.add.reduce(s, axis=axes, keepdims=keepdims))

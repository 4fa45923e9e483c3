"""Results of npc's public functions, ufunc methods and operators called with instances of a
Python subclass of npc.ndarray have the class NumPy's give for a subclass of numpy.ndarray:
the subclass (through __array_wrap__, 0-d results of reductions included), the base class,
or a scalar (Note [subclass results of functions] in python/npc/_interop.py). Each
expression runs with `np` bound to numpy and to npc; `r` is a 1-d instance of the subclass,
`m` a 2-d one, `S` the subclass."""
import warnings

import numpy
import pytest

import npc

EXPRS = [
    'np.sum(r)',
    'np.sum(m,axis=0)',
    'np.add.reduce(r)',
    'np.add.reduce(m)',
    'np.dot(r,r)',
    'np.dot(m,m.T)',
    'm@m.T',
    'r@r',
    'np.matmul(m,m.T)',
    'np.mean(r)',
    'np.max(r)',
    'np.argmax(r)',
    'np.argmax(m,axis=0)',
    'np.concatenate([r,r])',
    'np.stack([r,r])',
    'np.where(r>1,r,0)',
    'np.sort(r)',
    'np.argsort(r)',
    'np.cumsum(r)',
    'np.transpose(m)',
    'np.reshape(r,(2,3))',
    'np.ravel(m)',
    'np.squeeze(m)',
    'np.expand_dims(r,0)',
    'np.zeros_like(r)',
    'np.ones_like(r)',
    'np.empty_like(r)',
    'np.full_like(r,1)',
    'np.copy(r)',
    'np.array(r)',
    'np.asarray(r)',
    'np.asanyarray(r)',
    'np.diff(r)',
    'np.unique(r)',
    'np.outer(r,r)',
    'np.add.outer(r,r)',
    'np.add.accumulate(r)',
    'np.tensordot(m,m.T,1)',
    "np.einsum('ij->j',m)",
    'np.linalg.norm(r)',
    'np.linalg.inv(np.eye(2).view(S))',
    'np.clip(r,0,1)',
    'np.round(r)',
    'np.abs(r)',
    'np.nonzero(r)',
    'np.flip(r)',
    'np.roll(r,1)',
    'np.tile(r,2)',
    'np.repeat(r,2)',
    'np.median(r)',
    'np.percentile(r,50)',
    'np.var(r)',
    'np.std(m,axis=0)',
    'np.vstack([m,m])',
    'np.hstack([m,m])',
    'np.split(r,2)',
    'np.atleast_2d(r)',
    'np.broadcast_to(r,(2,6))',
    'np.cross(r[:3],r[:3])',
    'np.trace(m)',
    'np.diagonal(m)',
    'np.diag(r)',
    'np.triu(m)',
    'np.take(r,[0,1])',
    'np.inner(r,r)',
    'np.vdot(r,r)',
    'np.kron(r,r)',
    'np.cov(m)',
    'np.corrcoef(m)',
    'np.histogram(r)',
    'np.interp(r,r,r)',
    'np.searchsorted(r,2.)',
    'np.linspace(r,r+1,3)',
    'np.isclose(r,r)',
    'np.allclose(r,r)',
    'np.nan_to_num(r)',
    'np.real(r)',
    'np.prod(m,axis=1)',
    'np.any(r)',
    'np.all(m,axis=0)',
    'np.count_nonzero(m,axis=0)',
    'np.average(m,axis=0)',
    'np.ptp(m,axis=0)',
    'np.swapaxes(m,0,1)',
    'np.moveaxis(m,0,1)',
    'np.meshgrid(r,r)',
    'np.fft.fft(r)',
    'np.linalg.solve(np.eye(2).view(S), r[:2])',
    'np.matvec(m, r[:3])',
    'np.vecdot(r,r)',
    'np.convolve(r,r)',
    'np.gradient(r)',
    'np.trapezoid(r)',
    'np.sign(r)',
    'np.maximum(r,1)',
    'np.cumprod(r)',
    'np.nansum(r)',
    'np.nanmean(m,axis=0)',
    'np.append(r,1)',
    'np.insert(r,0,1)',
    'np.delete(r,0)',
    'np.pad(r,1)',
    'np.resize(r,4)',
    'np.partition(r,2)',
    'np.lexsort([r])',
    'np.select([r>1],[r])',
    'np.choose([0,1],[r[:2],r[:2]])',
    'np.compress([1,0],r[:2])',
    'np.extract(r>1,r)',
    'np.take_along_axis(r,np.array([0]),0)',
    'np.rot90(m)',
    'np.tril(m)',
    'np.column_stack([r,r])',
    'np.dstack([r,r])',
    'np.block([r,r])',
    'np.array_split(r,3)',
    'np.atleast_1d(r)',
    'np.atleast_3d(r)',
    'np.ediff1d(r)',
    'np.polyval(r,r)',
    'np.isnan(r)',
    'np.isfinite(r)',
    'np.fmax(r,r)',
    'np.floor(r)',
    'np.around(r)',
    'np.angle(r)',
    'np.sinc(r)',
    'np.i0(r)',
    'np.unwrap(r)',
    'np.diff(m,axis=0)',
    'np.argwhere(r)',
    'np.flatnonzero(r)',
    'np.real_if_close(r)',
    'np.min(r)',
    'np.amax(m,axis=0)',
    'np.argmin(r)',
    'np.nanargmax(r)',
    'np.nanmax(r)',
    'np.nanmin(m,axis=0)',
    'np.quantile(r,0.5)',
    'np.nanmedian(r)',
    'np.bincount(np.arange(3).view(S))',
    'np.digitize(r,r)',
    'np.histogram2d(r,r)',
    'np.piecewise(r,[r>1],[1,0])',
    'np.array_equal(r,r)',
    'np.logical_and(r,r)',
    "np.einsum('i,i',r,r)",
    'np.sum(r, keepdims=True)',
    'np.max(m, axis=1, keepdims=True)',
    'np.multiply.reduce(m, axis=None)',
    'np.add.reduceat(r, [0, 2])',
    'np.maximum.accumulate(m, axis=1)',
    'np.dot(r, m.T)',
    'np.dot(m, r[:3])',
    'np.cumsum(m, axis=0)',
    'np.sort(m, axis=None)',
    'np.argsort(m, axis=1)',
    'np.mean(m, axis=1)',
    'np.var(m, axis=0)',
    'np.std(r)',
    'np.prod(r)',
    'np.all(r)',
    'np.nancumsum(r)',
    'np.trunc(r)',
    'np.conj(r)',
    'np.conjugate(r)',
    'np.imag(r)',
    'np.square(r)',
    'np.clip(m, 1, 4)',
    'np.flipud(m)',
    'np.fliplr(m)',
    'np.unravel_index(3, (2,3))',
    'np.tensordot(r, r, 1)',
    'np.matrix_transpose(m)',
    'np.permute_dims(m, (1,0))',
    'np.cumulative_sum(r)',
    'np.cumulative_prod(r)',
    'np.unique_values(r)',
    'np.unique_counts(r)',
    'np.unique_all(r)',
    'np.unique_inverse(r)',
    'np.unique(r, return_index=True)',
    'np.unique(r, return_counts=True)',
    'np.unique(r, True, True, True)',
    'np.round(m, 1)',
    'np.round(m, -1)',
    'np.round(np.arange(3).view(S), 1)',
    'np.round(np.arange(3).view(S), -1)',
    'np.zeros_like(r, subok=False)',
    'np.copy(r, subok=True)',
    'np.array(r, subok=True)',
    'np.linalg.svd(np.eye(2).view(S))',
    'np.linalg.eigh(np.eye(2).view(S))',
    'np.linalg.multi_dot([m, m.T])',
    'np.linalg.vecdot(r, r)',
    'np.dot(np.ones((2, 2)).view(S), m)',
    'np.dot(np.ones((2, 2)), m)',
    'np.matmul(np.eye(2), m)',
    'np.broadcast_arrays(r, r)',
    'np.linalg.det(np.eye(2).view(S))',
    'np.linalg.matrix_power(np.eye(2).view(S), 2)',
    'np.linalg.eigvalsh(np.eye(2).view(S))',
    'np.linalg.qr(np.eye(2).view(S))',
    'np.linalg.svd(np.eye(2).view(S))',
    'np.linalg.pinv(np.eye(2).view(S))',
    'np.linalg.cholesky(np.eye(2).view(S))',
    'np.linalg.matmul(m, m.T)',
    'np.linalg.vector_norm(r)',
    'np.linalg.outer(r, r)',
    'np.fft.rfft(r)',
    'np.fft.ifft(r)',
    'np.fft.fftshift(r)',
    'np.heaviside(r, 0.5)',
    'np.float_power(r, 2)',
    'np.rint(r)',
    'np.positive(r)',
    'np.nanstd(r)',
    'np.nanvar(m, axis=0)',
    'np.nanprod(r)',
    'np.nanargmin(m, axis=0)',
    'np.nanpercentile(r, 50)',
    'np.nanquantile(r, 0.5)',
    'np.sort_complex(r)',
    'np.setdiff1d(r, r[:2])',
    'np.intersect1d(r, r)',
    'np.union1d(r, r)',
    'np.isin(r, r[:2])',
    'np.trim_zeros(r)',
    'np.tril_indices_from(m)',
    'np.diag_indices_from(np.eye(2).view(S))',
    'np.diagflat(r)',
    'np.vander(r, 3)',
    'np.count_nonzero(r)',
    'np.around(m, 1)',
    'np.ix_(r, r)',
    'np.squeeze(r[None])',
    'np.concat([r, r])',
    'np.unstack(m)',
    'np.vsplit(m, 2)',
    'np.hsplit(m, 3)',
    'np.amin(r)',
    'np.cbrt(r)',
    'np.spacing(r)',
    'np.frexp(r)',
    'np.modf(r)',
    'np.divmod(r, 2)',
    'np.copysign(r, -1)',
    'np.ldexp(r, 2)',
]


def _kind(x):
    if isinstance(x, (tuple, list)):
        return type(x).__name__, tuple(_kind(y) for y in x)
    name = type(x).__name__
    if name == "ndarray":
        name = "base"
    return name, getattr(x, "ndim", None) if name in ("S", "base") else None


def _outcome(m, expr):
    class S(m.ndarray):
        pass

    r = m.arange(1.0, 7.0).view(S)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _kind(eval(expr, {"np": m, "numpy": numpy, "r": r, "m": r.reshape(2, 3), "S": S}))
        except Exception as e:  # noqa: BLE001 (the exception type is the outcome)
            return "error", type(e).__name__


@pytest.mark.parametrize("expr", EXPRS)
def test_result_class_as_numpy(expr):
    assert _outcome(npc, expr) == _outcome(numpy, expr)


def test_values_and_attributes_survive_wrapping():
    class Info(npc.ndarray):
        def __array_finalize__(self, obj):
            self.info = getattr(obj, "info", None)

    r = npc.arange(6.0).view(Info)
    r.info = "I"
    for res in (npc.sum(r.reshape(2, 3), axis=0), npc.sum(r), npc.dot(r.reshape(2, 3), r.reshape(3, 2)),
                r.reshape(2, 3) @ r.reshape(3, 2), npc.add.reduce(r), npc.sort(r[::-1]), npc.linalg.inv(
                    (npc.eye(2) * 2).view(Info))):
        assert type(res) is Info
    assert npc.sum(r).info == "I" and float(npc.sum(r)) == 15.0
    assert npc.sort(r[::-1]).tolist() == [0, 1, 2, 3, 4, 5]
    assert type(npc.asarray(r)) is npc.ndarray and npc.shares_memory(npc.asarray(r), r)


def test_out_argument_is_returned_as_given():
    class S(npc.ndarray):
        pass

    r = npc.arange(6.0).reshape(2, 3).view(S)
    out = npc.zeros(3)
    assert npc.sum(r, axis=0, out=out) is out and type(out) is npc.ndarray


def test_plain_arrays_are_unchanged():
    a = npc.arange(6.0).reshape(2, 3)
    assert type(npc.sum(a, axis=0)) is npc.ndarray and type(npc.dot(a, a.T)) is npc.ndarray
    assert type(npc.sum(a)) is numpy.float64

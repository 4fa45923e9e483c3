"""npc arrays as Dask chunks (docs/dask.md), on Dask's synchronous scheduler: registration,
meta, creation through NEP 35 ``like=``, the NumPy functions Dask applies per chunk (all native,
no NumPy fallback), operators between npc and Dask arrays, protocol-5 pickling.

Dask is a pinned dependency (Makefile): these tests fail, never skip, without it.
"""
import pickle
import subprocess
import sys
import warnings

import dask
import dask.array as da
import numpy as np
import pytest

import npc
import npc.dask

SYNC = {"scheduler": "synchronous"}


def _run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()


def test_import_npc_does_not_import_dask():
    assert _run("import sys, npc; print(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))") \
        == ["False"]


@pytest.mark.parametrize("order", ["npc_first", "dask_first"])
def test_registration_whichever_is_imported_first(order):
    imports = "import npc; import dask.array" if order == "npc_first" else "import dask.array; import npc"
    out = _run(imports + "\nfrom dask.array.chunk_types import is_valid_chunk_type\n"
               "from dask.array.dispatch import concatenate_lookup\n"
               "print(is_valid_chunk_type(npc.ndarray), concatenate_lookup.dispatch(npc.ndarray) is npc.concatenate)")
    assert out == ["True", "True"]


def _chunked(shape=(6, 8, 4), chunks=(3, 4, 2), seed=0):
    xn = np.random.default_rng(seed).standard_normal(shape)
    return xn, da.from_array(xn, chunks=chunks), da.from_array(npc.asarray(xn), chunks=chunks, asarray=False)


def test_from_array_meta_and_compute():
    xn, dn, d = _chunked()
    assert type(d._meta) is npc.ndarray
    r = (d * 2 + 1).sum(axis=1)
    assert type(r._meta) is npc.ndarray
    with dask.config.set(SYNC):
        assert all(type(b) is npc.ndarray for b in dask.compute(*r.to_delayed().ravel()))
        out = r.compute()
    assert type(out) is npc.ndarray
    np.testing.assert_array_equal(np.asarray(out), ((dn * 2 + 1).sum(axis=1)).compute(**SYNC))
    for asarray in (None, True):
        e = da.from_array(npc.asarray(xn), chunks=(3, 4, 2), asarray=asarray)
        assert type(e._meta) is npc.ndarray and type(e.compute(**SYNC)) is npc.ndarray


def test_from_delayed_map_blocks_blockwise():
    xn = np.arange(24.0).reshape(4, 6)
    parts = [dask.delayed(npc.asarray)(xn[i:i + 2]) for i in (0, 2)]
    d = da.concatenate([da.from_delayed(p, shape=(2, 6), dtype=float, meta=npc.empty((0, 0))) for p in parts])
    assert type(d._meta) is npc.ndarray
    m = d.map_blocks(lambda b: b * 3 - b ** 2)
    assert type(m._meta) is npc.ndarray  # inferred by calling the function on the npc meta
    b = da.blockwise(np.add, "ij", d, "ij", d.T.T, "ij", dtype=float)
    with dask.config.set(SYNC):
        rm, rb = m.compute(), b.compute()
    assert type(rm) is npc.ndarray and type(rb) is npc.ndarray
    np.testing.assert_array_equal(np.asarray(rm), xn * 3 - xn ** 2)
    np.testing.assert_array_equal(np.asarray(rb), xn + xn)


@pytest.mark.parametrize("name", ["empty", "zeros", "ones", "full", "arange", "arange_dtype", "array", "asarray", "eye"])
def test_like_keeps_npc(name):
    like = npc.ones(2)
    make = {"empty": lambda: np.empty((2, 3), like=like), "zeros": lambda: np.zeros(3, np.int32, like=like),
            "ones": lambda: np.ones(3, like=like), "full": lambda: np.full(3, 2.5, like=like),
            "arange": lambda: np.arange(5, like=like),
            "arange_dtype": lambda: np.arange(0, 5, 1, np.float32, like=like),  # dtype positional, as NumPy
            "array": lambda: np.array([1, 2], like=like), "asarray": lambda: np.asarray([1.0], like=like),
            "eye": lambda: np.eye(3, like=like)}[name]
    expected = {"empty": np.empty((2, 3)), "zeros": np.zeros(3, np.int32), "ones": np.ones(3),
                "full": np.full(3, 2.5), "arange": np.arange(5), "arange_dtype": np.arange(0, 5, 1, np.float32),
                "array": np.array([1, 2]), "asarray": np.asarray([1.0]), "eye": np.eye(3)}[name]
    npc.reset_fallback_stats()
    r = make()
    assert type(r) is npc.ndarray and r.dtype == expected.dtype and r.shape == expected.shape
    if name != "empty":
        np.testing.assert_array_equal(np.asarray(r), expected)
    assert npc.fallback_stats() == {}


# Dask expressions whose per-chunk work is NumPy functions, ufuncs and methods (Dask's chunk
# functions, tree reductions, concatenation, products, arg reductions, top-k, nan-reductions).
CASES = {
    "ufuncs": lambda D, M: np.abs(D) * 2 - D ** 2 + np.maximum(D, 0.5) / 3,
    "sum_axes_keepdims": lambda D, M: D.sum(axis=(0, 2), keepdims=True),
    "sum_dtype": lambda D, M: D.sum(axis=1, dtype=np.float32),
    "mean_var_std": lambda D, M: D.mean(axis=0) + D.var(axis=1).sum() + D.std(axis=2, ddof=1).sum(),
    "min_max": lambda D, M: D.min(axis=2) + D.max(axis=0).sum(),
    "prod_cumsum": lambda D, M: D.prod(axis=1) + D.cumsum(axis=0).sum(axis=1),
    "any_all": lambda D, M: (D > 0).any(axis=0) & (D > -9).all(axis=0),
    "argmin_argmax": lambda D, M: D.argmin(axis=0) + D.argmax(axis=1).sum(),
    "nan_reductions": lambda D, M: da.nanmean(D, axis=1) + da.nansum(D, axis=1) + da.nanvar(D, axis=1)
    + da.nanmax(D, axis=1),
    "concatenate_stack": lambda D, M: da.concatenate([D, D], axis=1).sum(axis=1) + da.stack([D, D]).sum(axis=(0, 2)),
    "moveaxis": lambda D, M: da.moveaxis(D, 0, -1),
    "einsum": lambda D, M: da.einsum("ijk,jl->ikl", D, M),
    "matmul": lambda D, M: D[:, :, 0] @ M,
    "tensordot": lambda D, M: da.tensordot(D, M, axes=([1], [0])),
    "topk_argtopk": lambda D, M: da.topk(D.reshape(-1), 3) + da.argtopk(D.reshape(-1), 3),
    "slicing": lambda D, M: D[1:5, ::2, -1],
    "boolean_mask": lambda D, M: D[D > 0.5],
    "where_clip": lambda D, M: da.where(D > 0, D, 0) + da.clip(D, -1, 1),
    "rechunk_reshape": lambda D, M: D.rechunk((2, 8, 4)).reshape(48, 4),
    "tril_percentile": lambda D, M: da.tril(D[:, :6, 0]).sum() + da.percentile(D.reshape(-1), [10, 50]),
}


INEXACT = {"einsum", "tensordot", "matmul"}


@pytest.fixture
def record_protocol_calls(monkeypatch):
    """The NumPy functions and ufuncs that reach npc arrays through NEP 13/18."""
    calls = []
    af, au = npc.ndarray.__array_function__, npc.ndarray.__array_ufunc__

    def array_function(self, func, types, args, kwargs):
        calls.append(func.__name__)
        return af(self, func, types, args, kwargs)

    def array_ufunc(self, ufunc, method, *inputs, **kwargs):
        calls.append(ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}")
        return au(self, ufunc, method, *inputs, **kwargs)
    monkeypatch.setattr(npc.ndarray, "__array_function__", array_function)
    monkeypatch.setattr(npc.ndarray, "__array_ufunc__", array_ufunc)
    return calls


@pytest.mark.parametrize("name", list(CASES))
def test_chunk_functions_run_natively(name, record_protocol_calls, monkeypatch):
    xn, dn, d = _chunked()
    mn = np.random.default_rng(1).standard_normal((8, 5))
    expected = CASES[name](dn, da.from_array(mn, chunks=(4, 5))).compute(**SYNC)
    npc.reset_fallback_stats()
    monkeypatch.setattr(npc.config, "strict_fallback", True)  # a NumPy fallback raises
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = CASES[name](d, da.from_array(npc.asarray(mn), chunks=(4, 5), asarray=False))
        out = r.compute(**SYNC)
    assert npc.fallback_stats() == {}
    # docs/dask.md, "What is not supported": Dask gives a boolean mask's result a NumPy meta
    # (its chunks stay npc arrays), and passes arg reductions' partial results as NumPy
    # structured arrays.
    if name != "boolean_mask" and name != "argmin_argmax":
        assert type(r._meta) is npc.ndarray
    if name != "argmin_argmax":
        assert type(out) is npc.ndarray or np.isscalar(out)
    if name in INEXACT:
        # Products and sums of products: the summation order (BLAS blocking, pairwise
        # sums) is left unspecified by NumPy; a few rounding errors of the sums apart.
        np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-13, strict=True)
    else:
        np.testing.assert_array_equal(np.asarray(out), expected, strict=True)


def test_recorded_calls_include_dask_chunk_helpers(record_protocol_calls):
    _, _, d = _chunked()
    m = da.from_array(npc.ones((8, 5)), chunks=(4, 5), asarray=False)
    with dask.config.set(SYNC):
        da.concatenate([d, d]).sum(axis=0, keepdims=True).compute()
        da.einsum("ijk,jl->ikl", d, m).compute()
        da.tensordot(d, m, axes=([1], [0])).compute()
        da.moveaxis(d, 0, 2).compute()
        da.nanmean(d, axis=0).compute()
    # concatenate, einsum and tensordot come through Dask's dispatch tables (npc's own
    # functions are registered there); the rest through NEP 13/18.
    for fn in ("sum", "transpose", "nansum", "divide"):
        assert fn in record_protocol_calls, (fn, sorted(set(record_protocol_calls)))


@pytest.mark.parametrize("op", ["add", "mul", "lt", "matmul", "rpow"])
def test_operators_with_dask_arrays_give_dask_arrays(op):
    x = npc.asarray(np.arange(16.0).reshape(4, 4))
    d = da.from_array(np.ones((4, 4)), chunks=2)
    f = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "lt": lambda a, b: a < b,
         "matmul": lambda a, b: a @ b, "rpow": lambda a, b: 2.0 ** a + b}[op]
    for r, e in ((f(x, d), f(np.asarray(x), np.ones((4, 4)))), (f(d, x), f(np.ones((4, 4)), np.asarray(x)))):
        assert isinstance(r, da.Array)  # deferred, not computed into an npc array
        np.testing.assert_array_equal(np.asarray(r.compute(**SYNC)), e)


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("dtype", ["float64", "int32", "complex64", "bool"])
def test_pickle_protocol5_out_of_band_no_copy(layout, dtype):
    xn = (np.arange(60) % 7).astype(dtype).reshape(6, 10)
    x = npc.asarray(np.asfortranarray(xn) if layout == "F" else xn)
    buffers = []
    data = pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1 and isinstance(buffers[0], pickle.PickleBuffer)
    raw = buffers[0].raw()
    assert raw.nbytes == x.nbytes and len(data) < 400  # the elements travel out of band only
    assert np.asarray(raw).__array_interface__["data"][0] == x.__array_interface__["data"][0]  # no copy
    y = pickle.loads(data, buffers=buffers)
    assert type(y) is npc.ndarray and y.dtype == x.dtype and y.shape == x.shape
    assert y.flags.f_contiguous == x.flags.f_contiguous and y.flags.c_contiguous == x.flags.c_contiguous
    assert np.shares_memory(np.asarray(y), np.asarray(x))  # unpickled over the buffer
    np.testing.assert_array_equal(np.asarray(y), xn)


def test_pickle_protocol5_in_band_and_strided():
    x = npc.asarray(np.arange(24.0).reshape(4, 6))
    for obj in (x, x[:, ::2], x.T[1:]):
        for proto in (2, 4, 5):
            y = pickle.loads(pickle.dumps(obj, protocol=proto))
            assert type(y) is npc.ndarray and y.flags.writeable
            np.testing.assert_array_equal(np.asarray(y), np.asarray(obj), strict=True)


def test_compiled_chunk_function_in_map_blocks_and_reduction(tmp_path, monkeypatch):
    monkeypatch.setattr(npc.config, "cache_dir", str(tmp_path))
    xn = np.arange(48.0).reshape(8, 6)
    d = da.from_array(npc.asarray(xn), chunks=(2, 3), asarray=False)
    npc.dask.reset()
    k = npc.dask.compile(lambda b, axis, keepdims: (b * 2 + 1).sum(axis=axis, keepdims=keepdims))
    r = da.reduction(d, chunk=k, aggregate=np.sum, axis=0, dtype=np.float64)
    assert type(r._meta) is npc.ndarray
    chain = npc.dask.compile(lambda b: b * 3 - b ** 2)
    m = d.map_blocks(chain)
    assert type(m._meta) is npc.ndarray
    out, mout = dask.compute(r, m, **SYNC)
    assert type(out) is npc.ndarray and type(mout) is npc.ndarray
    np.testing.assert_array_equal(np.asarray(out), (xn * 2 + 1).sum(axis=0))
    np.testing.assert_array_equal(np.asarray(mout), xn * 3 - xn ** 2)
    st = npc.dask.stats()
    # (map_blocks without dtype= infers it from one call on a 1-element chunk: one call more)
    assert st["calls"] >= 2 * d.npartitions and st["compiled_functions"] == 2
    assert st["traces"] <= 5 < st["calls"]  # traced per chunk shape and layout, not per chunk
    # A pickled copy (what a worker receives) finds the process's compiled function.
    import cloudpickle  # how Dask sends functions (lambdas by value)
    k2 = pickle.loads(cloudpickle.dumps(k))
    assert k2.token == k.token and k2.compiled() is k.compiled()
    assert dask.base.tokenize(k2) == dask.base.tokenize(k)


def test_distributed_serialization_sends_the_array_memory():
    from distributed.protocol import deserialize, serialize
    x = npc.asarray(np.arange(1000.0).reshape(10, 100))
    header, frames = serialize(x)
    addresses = [np.frombuffer(f, np.uint8).__array_interface__["data"][0] for f in frames]
    assert x.__array_interface__["data"][0] in addresses  # a frame is the array's own memory
    assert sum(memoryview(f).nbytes for f in frames) < x.nbytes + 400
    y = deserialize(header, frames)
    assert type(y) is npc.ndarray and np.shares_memory(np.asarray(y), np.asarray(x))
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x), strict=True)


@pytest.mark.parametrize("name", ["ones", "zeros_int32", "full", "empty", "arange", "arange_float32", "random_state"])
def test_npc_array_backend_makes_npc_chunks(name):
    make = {"ones": lambda: da.ones((5, 4), chunks=2), "zeros_int32": lambda: da.zeros((5, 4), chunks=2, dtype=np.int32),
            "full": lambda: da.full((5, 4), 2.5, chunks=2), "empty": lambda: da.empty((5,), chunks=2),
            "arange": lambda: da.arange(10, chunks=3),
            "arange_float32": lambda: da.arange(0, 5, 0.5, chunks=3, dtype=np.float32),
            "random_state": lambda: da.random.RandomState(5).random_sample((5, 4), chunks=2)}[name]
    expected = make().compute(**SYNC)
    npc.reset_fallback_stats()
    with dask.config.set({"array.backend": "npc"}):
        d = make()
    assert type(d._meta) is npc.ndarray
    r = d.compute(**SYNC)
    assert type(r) is npc.ndarray and npc.fallback_stats() == {}
    if name != "empty":
        np.testing.assert_array_equal(np.asarray(r), expected, strict=True)  # npc.random: NumPy's streams


def test_to_backend_npc():
    x = da.from_array(np.arange(12.0).reshape(3, 4), chunks=2)
    y = x.to_backend("npc")
    assert type(y._meta) is npc.ndarray and type(y.compute(**SYNC)) is npc.ndarray
    assert type(y.to_backend("numpy").compute(**SYNC)) is np.ndarray

"""npc chunks on a real dask.distributed cluster: a LocalCluster of 2 worker processes (one
thread each) on loopback, started and stopped once for the module (docs/dask.md).

Results are compared with the same Dask expressions over NumPy chunks (computed on the
synchronous scheduler): values, dtypes and shapes. The data are small integers (as float or
int arrays), so every sum and product is exact whatever order Dask's tree reductions, NumPy
and npc use, and results must be equal bit for bit (var and std excepted: see
test_reductions_every_axis_combination).

Dask and distributed are pinned dependencies (Makefile): these tests fail, never skip, without them.
"""
import itertools
import os
import signal
import sys
import time

import cloudpickle
import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster, wait

import npc
import npc.dask

SYNC = {"scheduler": "synchronous"}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    # The workers' kernel cache: a fresh directory the two worker processes share.
    cache = tmp_path_factory.mktemp("npc-kernel-cache")
    os.chmod(cache, 0o700)
    mp.setenv("NPC_CACHE_DIR", str(cache))
    # Functions defined in this module travel by value (workers cannot import the test module).
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                           dashboard_address=None, worker_dashboard_address=None)
    c = Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
        mp.undo()


def _data(shape, dtype, seed=0):
    xn = np.random.default_rng(seed).integers(-4, 5, size=shape).astype(dtype)
    return xn, npc.asarray(xn)


def _pair(shape, chunks, dtype, seed=0):
    xn, x = _data(shape, dtype, seed)
    return da.from_array(xn, chunks=chunks), da.from_array(x, chunks=chunks, asarray=False)


def _check_all(client, exprs, arrays_np, arrays_npc, inexact=()):
    """Computes every expression over NumPy chunks (synchronous) and over npc chunks (on the
    cluster, in one go) and compares values, dtypes and shapes (bit for bit, except the
    expressions named in `inexact`: within 1e-13 relative)."""
    names = list(exprs)
    expected = dask.compute(*[exprs[n](*arrays_np) for n in names], **SYNC)
    graphs = [exprs[n](*arrays_npc) for n in names]
    for n, g in zip(names, graphs):
        if n.startswith(("mask", "arg")) or g.ndim == 0:
            # Dask gives a boolean mask's result and arg reductions a NumPy meta; 0-d
            # reductions are NumPy scalars, as NumPy's (docs/dask.md)
            continue
        assert type(g._meta) is npc.ndarray, n
    got = client.gather(client.compute(graphs))
    for n, e, g in zip(names, expected, got):
        if not n.startswith("arg"):
            assert type(g) is npc.ndarray or (np.isscalar(g) and np.isscalar(e)), (n, type(g))
        if n in inexact:
            np.testing.assert_allclose(np.asarray(g), e, rtol=1e-13, strict=True, err_msg=n)
        else:
            np.testing.assert_array_equal(np.asarray(g), e, strict=True, err_msg=n)


def test_elementwise(client):
    dn, d = _pair((30, 20), (10, 8), np.float64)
    en, e = _pair((30, 20), (10, 8), np.int32, seed=1)
    exprs = {
        "arith": lambda a, b: (a + 2) * a - a / 4 + a ** 2,
        "int_ops": lambda a, b: b * 3 - b // 2 + b % 3 + (b << 1),
        "mixed": lambda a, b: a * b + b,  # float64 with int32
        "compare": lambda a, b: (a > 0) & (b <= 1) | (a == b),
        "ufuncs": lambda a, b: np.abs(a) + np.sqrt(np.abs(a)) + np.maximum(a, b) + np.floor(a / 3),
        "where_clip": lambda a, b: da.where(a > 0, a, b) + da.clip(b, -1, 2),
        "astype": lambda a, b: a.astype(np.float32) * np.float32(1.5) + b.astype(np.int8),
        "broadcast": lambda a, b: a - a[0] + b[:, :1],
        "scalar_nep50": lambda a, b: b + 3 + np.int32(2) * (b > 0),
    }
    _check_all(client, exprs, (dn, en), (d, e))


REDUCTIONS = ["sum", "prod", "mean", "min", "max", "any", "all", "var", "std"]
AXES = [None] + [c for k in (1, 2, 3) for c in itertools.combinations(range(3), k)]


def _reduction(name, axis, keepdims):
    def f(a):
        return getattr(a > 0 if name in ("any", "all") else a, name)(axis=axis, keepdims=keepdims)
    return f


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_reductions_every_axis_combination(client, dtype):
    dn, d = _pair((8, 9, 10), (3, 4, 5), dtype)
    exprs = {}
    for red, axis, keepdims in itertools.product(REDUCTIONS, AXES, (False, True)):
        exprs[f"{red}{axis}{keepdims}"] = _reduction(red, axis, keepdims)
    for axis in (None, 0, 1, 2):
        exprs[f"argmax{axis}"] = (lambda ax: lambda a: a.argmax(axis=ax))(axis)
        exprs[f"argmin{axis}"] = (lambda ax: lambda a: a.argmin(axis=ax))(axis)
    exprs["sum_dtype"] = lambda a: a.sum(axis=(0, 2), dtype=np.float32)
    exprs["cumsum"] = lambda a: a.cumsum(axis=1)
    exprs["nanmean"] = lambda a: da.nanmean(a, axis=0)
    exprs["sumsq_dev"] = lambda a: ((a - a.mean(axis=0)) ** 2).sum(axis=0)
    # var and std add squared deviations from a mean that is not an integer: sums of inexact
    # values, whose order NumPy leaves unspecified (pairwise blocks, SIMD lanes). Compared to
    # a few rounding errors of the sum; everything else bit for bit.
    inexact = {k for k in exprs if k.startswith(("var", "std", "sumsq"))}
    _check_all(client, exprs, (dn,), (d,), inexact)


def test_matmul_slicing_masks(client):
    an, a = _pair((40, 30), (10, 15), np.float64)
    bn, b = _pair((30, 20), (15, 10), np.float64, seed=2)
    exprs = {
        "matmul": lambda x, y: x @ y,
        "matmul_T": lambda x, y: x.T @ x,
        "tensordot": lambda x, y: da.tensordot(x, y, axes=1),
        "einsum": lambda x, y: da.einsum("ij,jk->ik", x, y),
        "slices": lambda x, y: x[3:37:2, ::-1][:, 5],
        "fancy": lambda x, y: x[[1, 7, 2, 30]],
        "newaxis": lambda x, y: x[:, None, 2:4] + y[None, :4, :2],
        "mask": lambda x, y: x[x > 1],
        "mask_rows": lambda x, y: x[x[:, 0] > 0],
        "concat": lambda x, y: da.concatenate([x, y.T], axis=0),
        "stack_moveaxis": lambda x, y: da.moveaxis(da.stack([x, x + 1]), 0, -1),
    }
    _check_all(client, exprs, (an, bn), (a, b))


def _chain(b, m):
    return ((b - m) ** 2 * 0.5 + np.abs(b)).sum(axis=0, keepdims=True)


def test_compiled_chunks_trace_once_per_shape_and_reuse_disk_cache(client):
    xn, x = _data((230, 40), np.float64)
    dn, d = da.from_array(xn, chunks=(50, 40)), da.from_array(x, chunks=(50, 40), asarray=False)
    client.run(npc.dask.reset)
    kernel = npc.dask.compile(_chain)

    def build(arr, fn):
        m = arr.mean(axis=0)
        part = da.map_blocks(fn, arr, m[None, :], chunks=((1,) * arr.numblocks[0], arr.chunks[1]), dtype=arr.dtype)
        return part.sum(axis=0)

    expected = build(dn, _chain).compute(**SYNC)
    for run in range(2):
        r = client.compute(build(d, kernel)).result()
        assert type(r) is npc.ndarray
        np.testing.assert_array_equal(np.asarray(r), expected, strict=True)
    st = client.run(npc.dask.stats)
    assert sum(s["calls"] for s in st.values()) == 2 * d.numblocks[0]
    # Chunk shapes (50, 40) and (30, 40), each C-contiguous or a strided view: at most 4 traces a
    # worker, whatever the number of chunks and runs.
    # (Dask may place every chunk task on one worker, next to the array it slices.)
    assert all(s["traces"] <= 4 for s in st.values()) and sum(s["traces"] for s in st.values()) >= 1, st
    # Fresh worker processes find every kernel in the shared disk cache: no C++ compile.
    client.restart()
    client.run(npc.dask.reset)
    r = client.compute(build(d, kernel)).result()
    np.testing.assert_array_equal(np.asarray(r), expected, strict=True)
    st = client.run(npc.dask.stats)
    assert sum(s["compiles"] for s in st.values()) == 0, st
    assert sum(s["disk_hits"] for s in st.values()) >= 1, st


def _slow_block(b):
    time.sleep(0.15)
    return b * 2 + 1


def test_worker_killed_mid_computation_is_recovered(client):
    xn, x = _data((64, 10), np.float64)
    d = da.from_array(x, chunks=(4, 10), asarray=False)  # 16 tasks of 0.15 s on 2 workers
    expected = (xn * 2 + 1).sum(axis=0)
    fut = client.compute(d.map_blocks(_slow_block).sum(axis=0))
    pids = client.run(os.getpid)
    deadline = time.time() + 10
    while not any(client.processing().values()) and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.4)  # some tasks done, others running or queued
    victim = sorted(pids)[0]
    assert not fut.done()
    os.kill(pids[victim], signal.SIGKILL)
    r = fut.result(timeout=60)
    assert type(r) is npc.ndarray
    np.testing.assert_array_equal(np.asarray(r), expected, strict=True)
    # The nanny started a new worker process in place of the killed one.
    client.wait_for_workers(2, timeout=30)
    assert pids[victim] not in client.run(os.getpid).values()
    wait(client.compute(d.sum()))

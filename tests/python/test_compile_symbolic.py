"""npc.compile with symbolic (dynamic) sizes: shape-producing operations and Python reads of
shapes give eager NumPy's values and dtypes for every size, never an exception and never a
value frozen from an earlier size (Note [specialised symbols] in
src/tracer/trace_nodes.cpp, Note [shapes read in Python] in src/tracer/trace_inputs.cpp).
Sizes change over calls, so dims become symbolic (dynamic=None) or are symbolic from the
start (dynamic=True)."""
import warnings

import numpy as np
import pytest

import npc
from npc import compiler


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-compile-symbolic")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    np.testing.assert_array_equal(g, w)


CASES = {
    "concatenate axis 1": lambda a, b: np.concatenate([a, b], axis=1),
    "concatenate axis 0": lambda a, b: np.concatenate([a, b]),
    "concatenate axis None": lambda a, b: np.concatenate([a, b], axis=None),
    "concatenate mixed dtypes": lambda a, b: np.concatenate([a, b.astype(np.int32)], axis=1),
    "stack": lambda a, b: np.stack([a, b]),
    "stack axis -1": lambda a, b: np.stack([a, b], axis=-1),
    "hstack": lambda a, b: np.hstack([a, b]),
    "vstack": lambda a, b: np.vstack([a, b]),
    "column_stack": lambda a, b: np.column_stack([a[0], b[1]]),
    "pad": lambda a, b: np.pad(a, 1),
    "pad axis": lambda a, b: np.pad(a, ((0, 0), (2, 1)), constant_values=7.0),
    "repeat axis 1": lambda a, b: np.repeat(a, 2, axis=1),
    "repeat flat": lambda a, b: np.repeat(a, 3),
    "tile": lambda a, b: np.tile(a, (2, 3)),
    "reshape -1": lambda a, b: a.reshape(-1) * 2,
    "reshape (2, -1)": lambda a, b: a.reshape(2, -1) + 1,
    "reshape (-1, 2) of a row": lambda a, b: a[:2].reshape(-1, 2) + b[:2].reshape(-1, 2),
    "ravel": lambda a, b: a.ravel() + 1,
    "slices": lambda a, b: a[:, 1:] - a[:, :-1],
    "slice step": lambda a, b: a[:, ::2] * 2,
    "slice reversed": lambda a, b: a[:, ::-1] + b,
    "negative slice": lambda a, b: a[-2:] + 1,
    "diff": lambda a, b: np.diff(a, axis=1),
    "mean": lambda a, b: a.mean(),
    "mean axis": lambda a, b: a.mean(axis=1) + b.mean(axis=1),
    "var": lambda a, b: a.var(axis=1),
    "shape in Python": lambda a, b: a * a.shape[1] + len(b),
    "zeros of shape": lambda a, b: np.zeros(a.shape) + a,
    "arange of size": lambda a, b: np.arange(a.shape[1]) + a,
    "linspace of size": lambda a, b: np.linspace(0.0, 1.0, a.shape[1]) * b,
}


@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_sizes_change_over_calls(name, dynamic):
    f = CASES[name]
    cf = npc.compile(f, dynamic=dynamic)
    for w in (5, 7, 9, 6, 5, 7):
        a = np.arange(4.0 * w).reshape(4, w) - 3.0
        b = np.arange(4.0 * w).reshape(4, w) * 0.5
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning eagerly, none compiled
            want = f(a, b)
            got = cf(a, b)
        same(got, want)
    # Sizes seen before replay their graphs (or re-run the Python of functions with breaks).
    assert compiler.stats()["traces"] <= 6


@pytest.mark.parametrize("backend", ["eager", "fused"])
def test_concatenate_symbolic_width_replays(backend):
    f = lambda a, b: np.concatenate([a, b], axis=1) * 2  # noqa: E731
    cf = npc.compile(f, backend=backend)
    a = np.arange(20.0).reshape(4, 5)
    for w in (5, 2, 3, 2, 3):
        b = np.arange(4.0 * w).reshape(4, w)
        same(cf(a, b), f(a, b))
    s = compiler.stats()
    # 5 (static), 2 (dim 1 of b symbolic, specialised by the join), 3: three traces; the
    # repeated sizes replay.
    assert s["traces"] == 3 and s["cache_hits"] == 2, s


def test_reshape_carries_symbolic_dims_only_onto_equal_sizes():
    # (4, s) -> (2, 2s) must not keep (s0, s1): the traced view used to have the old shape.
    f = lambda a: a.reshape(2, -1) + 1  # noqa: E731
    cf = npc.compile(f, dynamic=True)
    for w in (3, 5, 3):
        a = np.arange(4.0 * w).reshape(4, w)
        same(cf(a), f(a))


def test_mean_over_symbolic_dim_is_not_frozen():
    f = lambda a: a.mean() + a.sum(axis=0).mean()  # noqa: E731
    cf = npc.compile(f)
    for n in (3, 4, 5, 7, 4):
        a = np.arange(float(n * 3)).reshape(n, 3)
        same(cf(a), f(a))


def test_symbolic_dims_stay_symbolic_without_shape_reads():
    f = lambda a, b: np.tanh(a) * b + a.sum(axis=1, keepdims=True)  # noqa: E731
    cf = npc.compile(f)
    for n in (3, 4, 5, 6, 7):
        a, b = np.ones((n, 2)), np.full((n, 2), 2.0)
        same(cf(a, b), f(a, b))
    assert compiler.stats()["traces"] == 2


def test_constraints_of_f_ordered_arguments_name_their_axes():
    # An F-ordered argument is bound transposed: the constraint that its symbolic axis 0
    # equals y's axis 0 must be checked on axis 0 of the argument, not of the binding.
    f = lambda x, y: x + y[:, None]  # noqa: E731
    cf = npc.compile(f, dynamic=True)
    for n, m in ((3, 4), (5, 6), (6, 5)):
        x, y = np.asfortranarray(np.arange(n * m * 1.0).reshape(n, m)), np.arange(float(n))
        same(cf(x, y), f(x, y))
    assert compiler.stats()["traces"] == 1
    x, y = np.asfortranarray(np.ones((4, 6))), np.ones(6)  # x.shape[1] == y.shape[0] only
    with pytest.raises(ValueError) as eager:
        f(x, y)
    with pytest.raises(ValueError) as compiled:
        cf(x, y)
    assert "broadcast" in str(eager.value) and "broadcast" in str(compiled.value)


@pytest.mark.parametrize("backend", ["eager", "fused"])
@pytest.mark.parametrize("join", [np.hstack, lambda xs: np.concatenate(xs, axis=1), np.vstack])
def test_join_of_empty_pieces_at_new_sizes(join, backend):
    # Empty pieces write nothing; their dims still fix the result's (Note [specialised symbols]).
    f = lambda a: join([a, a])  # noqa: E731
    cf = npc.compile(f, backend=backend)
    for n in (2, 3, 4, 5, 3):
        a = np.zeros((n, 0))
        same(cf(a), f(a))

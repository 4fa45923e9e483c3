"""Writes into arguments when a compiled function raises FloatingPointError.

NumPy stops at the operation that raises (np.errstate(...='raise')): the statements after it
never run, so arguments keep the values written before it, and an operation's own out= (an
in-place `A[i] /= 0`) is written before the operation raises. A compiled graph that raised
such an error stops at that operation (Note [writes before a raising operation] in
src/fusion/backend.cpp): the arguments get what they held there, on the tracing call and on
replays, with both backends, for whole graphs, segments between graph breaks and the steps
of a cut loop.
"""
import warnings

import numpy as np
import pytest

import npc
from npc import _core, compiler

from _compile_diff import BACKENDS, assert_same_as_numpy, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-fp-raise-writes")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def two_rows(A):
    A[0] = 1.0 / A[0]  # raises under errstate(divide='raise')
    A[1] = A[1] + 100  # NumPy never runs this
    return A


def row_loop(A):
    for i in range(A.shape[0]):
        A[i] = 1.0 / A[i]
    return A


def _run(fn, A):
    with np.errstate(divide="raise"):
        try:
            fn(A)
        except FloatingPointError as e:
            return type(e), str(e)
    return None


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("program, shape, zero", [(two_rows, (2, 2), (0, 0)), (row_loop, (60, 3), (30, 1))])
def test_arguments_after_floating_point_error(backend, program, shape, zero):
    cf = npc.compile(program, backend=backend)
    for _ in range(3):  # trace, replay, replay
        base = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
        base[zero] = 0.0
        want, got = base.copy(), base.copy()
        assert _run(program, want) is not None
        assert _run(cf, got) == _run(program, base.copy())
        np.testing.assert_array_equal(got, want)


# ---- the other kinds, in-place ops, several arguments


def overflow_rows(A):
    A[0] = A[0] * 1e308
    A[1] = A[1] + 100
    return A


def invalid_rows(A):
    A[0] = A[0] + 1
    A[1] = np.sqrt(A[1] - 7.0)
    A[2] = -A[2]
    return A.sum()


def underflow_rows(A):
    A[1] = A[1] * 2
    A[0] = A[0] * 1e-300 * 1e-300
    A[2] = 0.0
    return A


def in_place_rows(A, B):
    for i in range(A.shape[0]):
        A[i] /= B[i]  # NumPy writes A[i] (inf where B is 0), then raises
    return A


def in_place_first(A):
    A[0] /= 0.0
    A[1] += 1
    return A


def out_argument(A):
    np.multiply(A[0], 1e308, out=A[0])
    A[1] = 7.0
    return A


def reduce_out(A, out):
    np.add.reduce(A * 1e308, axis=0, out=out)
    A[0] = 3.0
    return out


def input_cast(A, B):
    np.add(B[0], 1, out=A[0], dtype=np.float32, casting="unsafe")  # the operand's cast raises first
    A[1] = 5.0
    return A


def out_cast(A, B):
    np.multiply(B[0], 1e300, out=A[0], casting="unsafe")  # the cast into out= is the op's
    A[1] = 5.0
    return A


def divmod_out(A, B):
    np.divmod(A[0], B[0], out=(A[1], A[2]))  # both outputs written, then the raise
    A[0] = 9.0
    return A


def other_argument(A, B):
    A += 1
    B[0] = 1.0 / B[0]  # the raise is in B's computation; A keeps its first write
    A *= 2
    B[1] = 5.0
    return A + B


def whole_overwrites(A, B):
    A[...] = B * 2  # a value no later node reads before the next write of the whole array
    s = B / B[0, 0]
    A[...] = s
    return A


def _check(program, args, backend, **state):
    """NumPy's values, exception, warnings and writes under np.errstate(**state): on a tracing
    call, and on replays of a trace made under a state that raises nothing."""
    with np.errstate(**state):
        check(program, args, backend=backend)  # the tracing call raises
    compiler.reset()
    cf = npc.compile(program, backend=backend)
    with np.errstate(all="ignore"):
        assert_same_as_numpy(cf, program, *args)  # traces
    with np.errstate(**state):
        for _ in range(2):
            assert_same_as_numpy(cf, program, *args)  # replays
    return cf


def _arrays(*shapes, zeros=()):
    out = []
    for k, shape in enumerate(shapes):
        a = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape) + 10 * k
        out.append(a)
    for k, idx in zeros:
        out[k][idx] = 0.0
    return tuple(out)


CASES = [
    ("divide", two_rows, _arrays((2, 2), zeros=[(0, (0, 0))])),
    ("divide", row_loop, _arrays((60, 3), zeros=[(0, (30, 1))])),
    ("over", overflow_rows, _arrays((3, 4))),
    ("invalid", invalid_rows, _arrays((3, 4))),
    ("under", underflow_rows, _arrays((3, 4))),
    ("divide", in_place_rows, _arrays((40, 3), (40, 3), zeros=[(1, (25, 2))])),
    ("divide", in_place_first, _arrays((3, 4))),
    ("over", out_argument, _arrays((3, 4))),
    ("over", reduce_out, _arrays((3, 4), (4,))),
    ("over", input_cast, (np.zeros((3, 4), np.float32), _arrays((3, 4))[0] * 1e300)),
    ("over", out_cast, (np.zeros((3, 4), np.float32), _arrays((3, 4))[0])),
    ("divide", divmod_out, _arrays((3, 4), (3, 4), zeros=[(1, (0, 2))])),
    ("divide", other_argument, _arrays((3, 4), (3, 4), zeros=[(1, (0, 1))])),
    ("divide", whole_overwrites, _arrays((3, 4), (3, 4), zeros=[(1, (0, 0))])),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind, program, args", CASES, ids=[c[1].__name__ for c in CASES])
def test_kinds_and_writes(backend, kind, program, args):
    _check(program, args, backend, **{kind: "raise"})


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind, program, args", CASES, ids=[c[1].__name__ for c in CASES])
def test_warn_state_unaffected(backend, kind, program, args):
    # Without "raise" every write happens and the warnings are NumPy's.
    with np.errstate(all="warn"):
        check(program, args, args, args, backend=backend)


def weak_cast_out(A):
    np.add(A[0], 1e300, out=A[0])  # the weak scalar's cast to float32 raises before the loop
    A[1] = 5.0
    return A


def reduce_cast(A, B):
    np.add.reduce(B * 1e300, axis=0, out=A[0], dtype=np.float32)
    A[1] = 5.0
    return A


@pytest.mark.parametrize("backend", BACKENDS)
def test_weak_scalar_cast(backend):
    # The fused kernel casts the constant (a launch parameter: Note [generic kernels] in
    # src/fusion/kernel_params.cpp) when it runs, and raises as NumPy's cast does.
    _check(weak_cast_out, (np.arange(12, dtype=np.float32).reshape(3, 4),), backend, over="raise")


def weak_cast_underflow(A):
    A[0] = A[0] + 1e-45  # NumPy never reports a Python scalar's underflow
    A[1] = A[1] * 3e-39
    return A


@pytest.mark.parametrize("backend", [
    pytest.param("eager", marks=pytest.mark.xfail(
        strict=True, reason="the eager backend casts the constant as an array, whose underflow it reports")),
    "fused",
])
def test_weak_scalar_cast_underflow_is_silent(backend):
    _check(weak_cast_underflow, (np.arange(12, dtype=np.float32).reshape(3, 4),), backend, under="raise")


def weak_cast_underflow_out(A):
    np.add(A[0], 1e-45, out=A[0])
    return A


@pytest.mark.xfail(strict=True, reason="eager npc reports 'underflow encountered in cast' for a Python float "
                                       "that underflows in the loop dtype on the out= path; NumPy is silent")
def test_weak_scalar_cast_underflow_with_out():
    _check(weak_cast_underflow_out, (np.arange(12, dtype=np.float32).reshape(3, 4),), "eager", under="raise")


@pytest.mark.parametrize("backend", BACKENDS)
def test_reduction_operand_cast(backend):
    # The overflow of a sum's own cast of its operand is named "reduce", as NumPy names it
    # (Note [buffered reduction casts] in src/tracer/trace_hooks.cpp).
    _check(reduce_cast, (np.zeros((3, 4), np.float32), _arrays((3, 4))[0]), backend, over="raise")


def warn_then_raise(A):
    A[0] = 1.0 / A[0]  # warns (divide='warn')
    A[1] = np.sqrt(A[1] - 100.0)  # raises (invalid='raise')
    A[2] = 1.0 / A[2]  # neither warns nor runs
    return A


@pytest.mark.parametrize("backend", BACKENDS)
def test_warnings_before_the_raise(backend):
    args = _arrays((3, 4), zeros=[(0, (0, 1)), (0, (2, 2))])
    _check(warn_then_raise, args, backend, divide="warn", invalid="raise")


def no_errors(A, B):
    A[0] = A[0] / B[0]
    A[1:] *= 2
    return (A * B).sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_error_is_unaffected(backend):
    args = _arrays((3, 4), (3, 4))
    _check(no_errors, args, backend, all="raise")


# ---- graph breaks, errstate inside the function, cut loops, host calls


def with_break(A):
    A[0] = A[0] * 2
    if float(A[0, 0]) > 0:  # a value: a graph break
        A[1] = 1.0 / A[1]
        A[2] = 3.0
    return A


def nested(A):
    A[0] = 1.0 / A[0]  # the caller's state: warns
    with np.errstate(divide="raise"):
        A[1] = A[1] + 1
        A[2] = 1.0 / A[2]
        A[3] = 5.0
    return A


@pytest.mark.parametrize("backend", BACKENDS)
def test_segment_after_a_break(backend):
    args = _arrays((3, 4), zeros=[(0, (1, 3))])
    _check(with_break, args, backend, divide="raise")


@pytest.mark.parametrize("backend", BACKENDS)
def test_errstate_inside(backend):
    args = _arrays((4, 3), zeros=[(0, (0, 0)), (0, (2, 1))])
    _check(nested, args, backend, divide="warn")


def cut_loop(A, B):
    for i in range(1, A.shape[0]):
        A[i] = A[i - 1] * 0.5 + A[i] / B[i]
    return A


@pytest.mark.parametrize("backend", BACKENDS)
def test_steps_of_a_cut_loop(backend):
    # Steps of a plan: values carried between them are the trace's own (written in place).
    args = _arrays((80, 3), (80, 3), zeros=[(1, (50, 1))])
    with npc.config.patch(segment_nodes=30):
        cf = _check(cut_loop, args, backend, divide="raise")
    assert cf.last_cuts > 0  # the trace was cut: the case this test is about


def owned_loop(A, B):
    t = A * 1.0  # after a cut, the trace's own array: steps update it in place
    for i in range(1, A.shape[0]):
        t[i] = t[i - 1] * 0.5 + t[i] / B[i]
        A[i] = t[i]
    return t


@pytest.mark.parametrize("backend", BACKENDS)
def test_steps_writing_their_own_inputs(backend):
    args = _arrays((80, 3), (80, 3), zeros=[(1, (50, 1))])
    with npc.config.patch(segment_nodes=30):
        cf = _check(owned_loop, args, backend, divide="raise")
    assert cf.last_cuts > 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("program", [cut_loop, owned_loop])
def test_steps_in_the_background(backend, program):
    # Note [segments in the background]: a step runs on a thread of its own, under the error
    # state of the thread that traces.
    args = _arrays((80, 3), (80, 3), zeros=[(1, (50, 1))])
    prev = _core._background_segments(1)
    try:
        with npc.config.patch(segment_nodes=30):
            _check(program, args, backend, divide="raise")
    finally:
        _core._background_segments(prev)


def with_random(A):
    A[0] = np.random.rand(4)
    A[1] = 1.0 / A[1]
    A[2] = np.random.rand(4)
    return A


@pytest.mark.parametrize("backend", BACKENDS)
def test_host_calls(backend):
    # numpy.random runs as a host call of the graph, once per call, as in NumPy: the stream
    # advances by the draws made before the raise only.
    args = _arrays((3, 4), zeros=[(0, (1, 0))])
    cf = npc.compile(with_random, backend=backend)
    for state in ("ignore", "raise", "raise", "raise"):  # trace (then replays), or trace each time
        if state == "ignore" and cf is not None:
            compiler.reset()
            cf = npc.compile(with_random, backend=backend)
        outcomes = []
        for fn in (with_random, cf):
            a = np.copy(args[0])
            np.random.seed(5)
            with np.errstate(divide=state):
                try:
                    fn(a)
                    e = None
                except FloatingPointError as x:
                    e = str(x)
            outcomes.append((e, a, np.random.rand()))
        (e0, a0, r0), (e1, a1, r1) = outcomes
        assert e0 == e1 and r0 == r1
        np.testing.assert_array_equal(a1, a0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_default_state(backend):
    # NumPy's default state warns: every write happens, on the tracing call and on replays.
    args = _arrays((3, 4), zeros=[(0, (0, 0))])
    check(two_rows, args, args, args, backend=backend)

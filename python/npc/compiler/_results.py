"""A compiled function's results: the tree of outputs a trace returns (_flatten), rebuilt from
a graph's outputs on replays (_rebuild), with results that view inputs or each other (Note
[results that view inputs]) and the containers a trace changed (Note [mutated arguments])."""
import numpy as _np

from .. import _core
from .._dtypes import code_of
from ._capture import _RuntimeFloat, _RuntimeInt
from ._convert import _MISSING, _NDARRAY, _converted_npc, _from_numpy
from ._guards import _locate
from ._state import _is_npc


def _make_rebuild(tree, numpy_out):
    """A function from the graph's outputs to the result, specialised for the common shapes
    (one array, a tuple of arrays) so that replays do little Python work."""
    if tree[0] == "A" and not numpy_out:
        if tree[2]:
            return lambda outs: outs[0]._scalar()
        return lambda outs: outs[0]
    if tree[0] is tuple and not numpy_out and all(t[0] == "A" and not t[2] for t in tree[1]):
        idx = [t[1] for t in tree[1]]
        if idx == list(range(len(idx))):
            return tuple
    if numpy_out:
        if tree[0] == "A":
            flag = [tree[2]]
            return lambda outs: _core._numpy_views(outs, flag)[0]
        if tree[0] is tuple and all(t[0] == "A" for t in tree[1]) and \
                [t[1] for t in tree[1]] == list(range(len(tree[1]))):
            flags = [t[2] for t in tree[1]]
            return lambda outs: tuple(_core._numpy_views(outs, flags))
    return lambda outs: _rebuild(tree, outs, numpy_out)


def _write_back_realized(containers, kb, traced, numpy_out, scalar_of):
    """The caller's list and dict arguments get the contents the traced function left in their
    copies when it raised, after the operations recorded before the exception ran (their
    traced arrays are realized): Note [mutated arguments]."""
    mutated = [(orig, c) for orig, c, items in containers if _changed(c, items)]
    if not mutated:
        return
    objects = {id(c): orig for orig, c, _ in containers}
    for x, path in kb.arrays:
        objects[id(traced[id(x), path])] = x
    leaves, tree = _flatten([type(c)(c) for _, c in mutated], traced.values(), objects,
                            scalar_of)
    outs = []
    for leaf in leaves:
        if _is_npc(leaf) and _core._is_traced(leaf):
            _core._realize(leaf)
        outs.append(leaf if _is_npc(leaf) else _from_numpy(_np.asarray(leaf)))
    for (orig, _), new in zip(mutated, _rebuild(tree, outs, numpy_out)):
        if type(orig) is list:
            orig[:] = new
        else:
            orig.clear()
            orig.update(new)


def _changed(c, items):
    """Whether traced copy `c` of a list or dict argument no longer holds `items` (the same
    objects in the same places, Note [mutated arguments])."""
    now = list(c.items()) if type(c) is dict else list(c)
    if len(now) != len(items):
        return True
    if type(c) is dict:
        return any(k0 != k1 or v0 is not v1 for (k0, v0), (k1, v1) in zip(now, items))
    return any(a is not b for a, b in zip(now, items))


# Note [results that view inputs] (src/tracer/trace.hpp)
# NumPy returns an argument itself where the program returns it (`return a`, `np.add(a, 1,
# out=o)`), and views of it that share its memory and have it (or the array owning its memory)
# as base (`a[1:]`, `a.T`, `a.reshape(...)`). A compiled function does the same, on the
# tracing call and on every replay: a result that is the traced stand-in of an argument is
# that argument of the call (tree node ("I", k): the k-th array of the guard key, found on
# replays at its place among the arguments, _locate); one that is the stand-in of a captured
# array is that array (guarded by identity); one that is a view of either is ("V", j): the
# view chain the tracer recorded (an OutputView) applied to the array bound for it on this
# call (with this call's sizes), then made a view of the caller's object itself
# (_core._alias_of), of its type: a NumPy argument gives NumPy views, an npc one npc views,
# as in eager code. Such results are no outputs of the graph (no copy is made).
class _Aliases:
    """The classifier of a trace's results for _flatten (Note [results that view inputs])."""

    def __init__(self, ctx, kb, traced, arg_inputs, standins):
        self.ctx, self.kb = ctx, kb
        self.nodes = {}    # id of a traced stand-in -> its tree node
        self.origins = {}  # top input of the trace -> ("I", k) or ("S", captured array)
        for k, (x, path) in enumerate(kb.arrays):
            self.nodes.setdefault(id(traced[id(x), path]), ("I", k))
            self.origins.setdefault(arg_inputs[k], ("I", k))
        for i, t in standins.items():
            v = standins.objects.get(i)
            if v is None or id(t) in self.nodes:
                continue  # an argument
            self.nodes[id(t)] = ("S", v)
            ov = ctx.output_view(t)
            if ov is not None:
                self.origins.setdefault(ov.input, ("S", v))
        self.views = []  # (OutputView, origin, writeable)
        self.used = False
        self.shared = {}  # id of a result on a buffer other results view too -> (buffer id, OutputView)
        self.wholes = {}  # buffer id -> the traced array over that whole buffer

    def group(self, result):
        """Finds the results that view one buffer of the trace's own (Note [results that view
        each other] in src/tracer/trace_segments.cpp)."""
        found = {}

        def visit(x, depth):
            if isinstance(x, _NDARRAY):
                if id(x) in self.nodes or (x.ndim == 0 and _core._scalar_result(x)):
                    return
                b = self.ctx.buffer_id(x)
                if b:
                    found.setdefault(b, {})[id(x)] = x
            elif depth < 64:
                if type(x) is tuple or type(x) is list:
                    for v in x:
                        visit(v, depth + 1)
                elif type(x) is dict:
                    for v in x.values():
                        visit(v, depth + 1)
        visit(result, 0)
        for b, xs in found.items():
            if len(xs) < 2:
                continue
            views = {i: self.ctx.buffer_view(x) for i, x in xs.items()}
            if any(v is None for v in views.values()):
                continue
            for i, (whole, ov) in views.items():
                self.wholes.setdefault(b, whole)
                self.shared[i] = (b, ov)

    def __call__(self, x):
        if type(x) is _np.ndarray:
            t = _converted_npc(x)
            if t is not None:
                x = t  # `np.asarray(a)` returns `a` itself in NumPy
        sh = self.shared.get(id(x))
        if sh is not None:  # ("B", buffer id, the whole buffer, view): made a "W" node by _flatten
            self.views.append((sh[1], None, bool(x.flags.writeable)))
            self.used = True
            return ("B", sh[0], self.wholes[sh[0]], len(self.views) - 1)
        node = self.nodes.get(id(x))
        if node is None and _is_npc(x):
            ov = self.ctx.output_view(x)
            origin = self.origins.get(ov.input) if ov is not None else None
            if origin is not None:
                self.views.append((ov, origin, bool(x.flags.writeable)))
                node = ("V", len(self.views) - 1)
        elif node is None and type(x) is _np.ndarray and self.ctx.breaks:
            # A NumPy view of an argument realized at a break (`np.asarray(x)[1:]`): this
            # call's (a function with breaks traces every call).
            for origin in self.origins.values():
                o = self.kb.arrays[origin[1]][0] if origin[0] == "I" else origin[1]
                if _np.may_share_memory(x, _np.asarray(o)):
                    view = _from_numpy(x)
                    self.views.append((lambda inputs, view=view: view, origin, bool(x.flags.writeable)))
                    node = ("V", len(self.views) - 1)
                    break
        if node is not None and node[0] != "S":
            self.used = True
        return node

    def at_trace(self, kb):
        """The ("I", k), ("V", j) and ("W", k, j) results of the tracing call."""
        top = self.ctx.top_inputs
        views = self.views

        def get(t, base=None):
            if t[0] == "I":
                return kb.arrays[t[1]][0]
            if t[0] == "W":
                return _result_view(views[t[2]], base, top)
            ov, origin, writeable = views[t[1]]
            o = kb.arrays[origin[1]][0] if origin[0] == "I" else origin[1]
            return _core._alias_of(o, ov(top), writeable)
        return get

    def for_replay(self, kb):
        """A function of a replay's arguments and bound inputs giving its ("I", k) and ("V", j)
        results."""
        locs = list(kb.locs)
        views = self.views

        def make(args, kwargs, inputs):
            def get(t, base=None):
                if t[0] == "I":
                    return _locate(args, kwargs, locs[t[1]])
                if t[0] == "W":
                    return _result_view(views[t[2]], base, inputs)
                ov, origin, writeable = views[t[1]]
                o = _locate(args, kwargs, locs[origin[1]]) if origin[0] == "I" else origin[1]
                return _core._alias_of(o, ov(inputs), writeable)
            return get
        return make


def _result_view(view, base, inputs):
    """Result ("W", k, j) (Note [results that view each other] in src/tracer/trace_segments.cpp):
    view j's chain on `base`, the (npc or NumPy) array output k holding the whole buffer."""
    ov, _, writeable = view
    if type(base) is _np.ndarray:
        v = ov.apply_to(_from_numpy(base), inputs)
        return _core._alias_of(base, v, writeable)
    v = ov.apply_to(base, inputs)
    return v if writeable else _core._alias_of(base, v, False)


# Note [aliased containers]
# A list or dict met twice among the arguments (`f(xs, xs)`, `f([xs, xs])`) is one object in
# NumPy code: a change through one name shows through the other. So the trace substitutes one
# copy for it (memoised by identity), and the guard key records the aliasing (the second
# occurrence is ("same", n), n numbering the containers met so far): a call whose containers
# alias differently traces again.


# Note [mutated arguments]
# A list or dict argument is traced as a copy holding the traced stand-ins of its arrays (and
# runtime scalars). When the function changes the copy (`xs[0] = ...`, `xs.append(...)`,
# `d["k"] = ...`, also of a nested list), NumPy code changes the caller's object, on every
# call: so the caller's container gets the copy's final contents (arrays computed by the
# trace, the caller's own objects where the copy held their stand-ins, the floats' values),
# and the function runs its Python on every call, as one with graph breaks does (a replay
# without Python could not change the container). A result that is such a copy is the
# caller's object too (`return xs`).
def _flatten(obj, inputs=(), objects=None, scalar_of=None, alias=None, foreign=None):
    """Array leaves of a result and a tree to rebuild it (non-array leaves are static).
    0-d results that eager NumPy returns as NumPy scalars (ufuncs, reductions, `x[0]`) become
    scalars, the others (`where`, `astype`, views, `zeros(())`) stay 0-d arrays (Note [scalar
    results] in src/tracer/trace.hpp); 0-d arrays the function received stay arrays.
    `objects` maps ids of traced stand-ins to the caller's objects, which the tree then holds
    as static leaves; `scalar_of` gives a runtime scalar's value (Note [mutated arguments]).
    `alias` (an _Aliases) names the arrays that are arguments or views of them (Note [results
    that view inputs]): their tree nodes are ("I", k) and ("V", j), not graph outputs.
    NumPy arrays of a dtype npc lacks (Note [results of dtypes npc lacks]) are static leaves
    too, appended to `foreign` when given."""
    leaves = []
    ids = {id(i) for i in inputs}
    memo = {}     # id of an array met before -> its node (one object, one node)
    wholes = {}   # buffer id -> leaf of the whole buffer (Note [results that view each other])
    if alias is not None:
        alias.group(obj)

    def walk_array(x):
        if alias is not None:
            node = alias(x)
            if node is not None and node[0] == "B":
                k = wholes.get(node[1])
                if k is None:
                    leaves.append(node[2])
                    k = wholes[node[1]] = len(leaves) - 1
                return ("W", k, node[3])
            if node is not None:
                return node
        leaves.append(x)
        scalar = x.ndim == 0 and id(x) not in ids and _is_npc(x) and _core._scalar_result(x)
        return ("A", len(leaves) - 1, scalar)

    def walk(x):
        if objects is not None:
            o = objects.get(id(x), _MISSING)
            if o is not _MISSING:
                return ("S", o)
            if isinstance(x, _RuntimeFloat):
                return ("S", scalar_of(x))
        if type(x) is _RuntimeInt:
            return ("S", x._static())  # a runtime int returned: static (Note [runtime ints] in _guards.py)
        if isinstance(x, _np.ndarray) and code_of(x.dtype) is None:
            if foreign is not None:
                foreign.append(x)
            return ("S", x)
        if isinstance(x, (_core.ndarray, _np.ndarray)):
            node = memo.get(id(x))
            if node is None:
                node = memo[id(x)] = walk_array(x)
            return node
        t = type(x)
        if t is tuple or t is list:
            return (t, [walk(v) for v in x])
        if t is dict:
            return (dict, [(k, walk(v)) for k, v in x.items()])
        return ("S", x)
    return leaves, walk(obj)


def _rebuild(tree, outs, numpy_out, aliases=None):
    """The result from its tree (_flatten), the graph's outputs and, for ("I", k) and ("V", j)
    nodes, `aliases` (a function of the node: Note [results that view inputs])."""
    from .._array import _numpy_view

    memo = {}  # one node, one object: an array met twice in the result is one object

    def build(t):
        kind = t[0]
        if kind == "A" or kind == "I" or kind == "V" or kind == "W":
            key = t[:2] if kind == "A" else t
            r = memo.get(key, _MISSING)
            if r is _MISSING:
                r = memo[key] = build_array(t)
            return r
        if kind == "S":
            return t[1]
        if kind is dict:
            return {k: build(v) for k, v in t[1]}
        return kind(build(v) for v in t[1])

    def whole(k):
        r = memo.get(("whole", k), _MISSING)
        if r is _MISSING:
            a = outs[k]
            if not a.flags.c_contiguous:
                a = a.copy()  # the views' chains start from the buffer's C-contiguous layout
            r = memo[("whole", k)] = _numpy_view(a) if numpy_out else a
        return r

    def build_array(t):
        kind = t[0]
        if kind == "W":
            return aliases(t, whole(t[1]))
        if kind == "A":
            a = outs[t[1]]
            if numpy_out:
                v = _numpy_view(a)
                return v[()] if t[2] else v
            return a._scalar() if t[2] else a
        if kind == "S":
            return t[1]
        if kind == "I" or kind == "V":
            return aliases(t)
        if kind is dict:
            return {k: build(v) for k, v in t[1]}
        return kind(build(v) for v in t[1])
    return build(tree)

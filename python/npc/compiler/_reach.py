"""The guards of what a trace's code reached besides the function's own names: Note [globals
read while tracing]."""
import sys
import types

from . import _api  # CompiledFunction (_api imports this module first)
from ._guards import _MISSING, _free_key, _watchable
from ._reads import _global_names, _user_file, _user_module


# Note [globals read while tracing]
# A replay runs none of the function's Python, so everything the traced code read besides its
# arguments is part of the guard key (_free_key), compared on every call:
# - the globals and closure cells the function's own code names (_free_values);
# - the globals of every function of the user's that ran while tracing: helpers in the same
#   module or in others, methods of argument objects, functions reached through modules or
#   classes (_reads.Recorder, with `keep` False when the trace is not kept, lists the code
#   that starts on the tracing thread with its module's dict); each name such code reads as a
#   global that its module defines is guarded (reached_free);
# - for the values among those that are the user's modules, classes, functions, compiled
#   functions or objects of the user's classes, the entries of their own dicts (a class: its
#   MRO's) that the code that ran names as attributes (`cfg.SCALE`, `helper.k`, `Model.eps`,
#   `double.gain` on a compiled function), two levels deep (`mod.cfg.scale`).
# Numbers, strings, bytes and None compare by value; lists, tuples, dicts and sets by
# contents; arrays by identity (they are bound by reference); functions, classes, modules and
# ufuncs by identity (rebinding `helper = other` traces again); other objects only through
# the attributes read (Note [attribute reads]).
# A name whose value the trace itself changes (a global assigned, a list appended to, a dict
# entry set: CompiledFunction._trace_once compares _free_state before and after) is a Python
# side effect that a replay would skip and the next call may read: the function then runs its
# Python on every call, as one with graph breaks does (its kernels are reused, Note [loops]),
# and the name is left out of the key (CompiledFunction._unguarded), which would fail on every
# call. A name reached for the first time is compared from its second trace on: a helper's
# container changed by the first trace fails the guard at the next call, whose trace sees it.
# Not seen: names read by computation (getattr(mod, name), globals()[name]), attributes three
# levels down, builtins rebound, the closure cells of functions other than the compiled one,
# code that ran on other threads, and while another thread's trace holds the recorder, the
# code reached beyond the function's own names.
_REACH_MAX = 512  # guards added for the code a trace reached


def _own_attr(v, a):
    """Attribute `a` of `v` as its own dict holds it (a class: the first of its MRO's), or
    _MISSING; properties, __getattr__ and slots are not run."""
    if isinstance(v, type):
        for k in v.__mro__:
            d = k.__dict__
            if a in d:
                return d[a]
        return _MISSING
    try:
        d = object.__getattribute__(v, "__dict__")
    except AttributeError:
        return _MISSING
    if type(d) is not dict:
        return _MISSING
    if type(v) is _api.CompiledFunction and a in v._own_attrs:
        return _MISSING  # npc's bookkeeping, not the user's attribute
    return d.get(a, _MISSING)


def _attr_space(v):
    """Whether `v`'s own attributes read by the traced code are guarded: the user's module,
    class, function, compiled function or object of the user's class."""
    if isinstance(v, types.ModuleType):
        return _user_module(v.__name__)
    if isinstance(v, type):
        return _user_module(v.__module__)
    if type(v) is types.FunctionType:
        return _user_file(v.__code__.co_filename)
    if type(v) is _api.CompiledFunction:
        return True
    return _watchable(v) and _user_module(type(v).__module__)


def _cell(v, name):
    """The value of closure cell `name` of function `v`, or _MISSING."""
    if type(v) is not types.FunctionType or not v.__closure__:
        return _MISSING
    for n, c in zip(v.__code__.co_freevars, v.__closure__):
        if n == name:
            try:
                return c.cell_contents
            except ValueError:
                return _MISSING
    return _MISSING


def _step(get, a):
    """A getter of attribute `a` (a str) or closure cell (("cell", name)) of what `get` gives."""
    if type(a) is tuple:
        return lambda: _cell(get(), a[1])

    def attr():
        v = get()
        return v if v is _MISSING else _own_attr(v, a)
    return attr


def _path_getter(g, path):
    get = lambda: g.get(path[0], _MISSING)  # noqa: E731
    for a in path[1:]:
        get = _step(get, a)
    return get


def _state_of(v):
    return _free_key((("", lambda: v),))


class ReadState:
    """What the globals and containers the user's code can reach held as that code first
    started while tracing (Note [globals read while tracing]; _reads.Recorder calls it): a
    change by the trace is a side effect, found by reached_free at its end."""

    def __init__(self):
        self.names = {}  # (id of a module dict, name) -> (the dict, _state_of its value then)
        self.objs = {}  # id of a list, dict or set -> (it, _state_of it then)

    def __call__(self, code, g, frame):
        attrs = code.co_names
        for name in _global_names(code):
            if (id(g), name) not in self.names:
                v = g.get(name, _MISSING)
                self.names[id(g), name] = (g, _state_of(v))
                self._walk(v, attrs, 0)
        if code.co_freevars and frame is not None:
            loc = frame.f_locals
            for name in code.co_freevars:
                self._walk(loc.get(name, _MISSING), attrs, 0)

    def _walk(self, v, attrs, depth):
        t = type(v)
        if t is list or t is dict or t is set:
            if id(v) not in self.objs and len(self.objs) < _REACH_MAX:
                self.objs[id(v)] = (v, _state_of(v))
            return
        if depth >= 2:
            return
        if _attr_space(v):
            for a in attrs:
                w = _own_attr(v, a)
                if w is not _MISSING:
                    self._walk(w, attrs, depth + 1)
        if t is types.FunctionType and v.__closure__ and _user_file(v.__code__.co_filename):
            for name in v.__code__.co_freevars:
                self._walk(_cell(v, name), attrs, depth + 1)

    def changed(self, g, name, v):
        """Whether global `name` of module dict `g` (None: not a global), now `v`, or the
        container `v` is, changed since the code reading it started."""
        if g is not None:
            was = self.names.get((id(g), name))
            if was is not None and was[0] is g and was[1] != _state_of(v):
                return True
        was = self.objs.get(id(v))
        return was is not None and was[0] is v and was[1] != _state_of(v)


def reached_free(reached, own_globals, own_free, known, state=None):
    """The guards (label, getter, (module name, path) or None) of what the code in `reached`
    ((code, its module's dict) pairs: _reads.Recorder.reached) read, and of the attributes and
    closures of the function's own closure values: Note [globals read while tracing].
    `own_globals`: the compiled function's module dict (its names are labelled `global NAME`,
    others `global MODULE.NAME`); `own_free`: its (label, getter) pairs; `known`: labels
    guarded already. A guard reached through a closure cell has no module path (None).
    Returns (guards, the labels among them whose values the trace changed: `state`, a
    ReadState)."""
    attrs = set()
    for code, _ in reached:
        attrs.update(code.co_names)
    attrs = sorted(attrs)
    out = []
    seen = set(known)  # labels guarded
    visited = set()  # labels whose attributes were looked at

    changed = []

    def add(label, get, desc, v, depth, g=None, name=None):
        if len(out) >= _REACH_MAX or label in visited:
            return
        visited.add(label)
        if label not in seen:
            seen.add(label)
            out.append((label, get, desc))
            if state is not None and state.changed(g, name, v):
                changed.append(label)
        if depth >= 2:
            return
        if _attr_space(v):
            for a in attrs:
                w = _own_attr(v, a)
                if w is not _MISSING:
                    add(f"{label}.{a}", _step(get, a), desc and (desc[0], desc[1] + (a,)), w, depth + 1)
        if type(v) is types.FunctionType and v.__closure__ and _user_file(v.__code__.co_filename):
            for name in v.__code__.co_freevars:
                w = _cell(v, name)
                if w is not _MISSING:
                    add(f"{label}.<closure {name}>", _step(get, ("cell", name)), None, w, depth + 1)
    for code, g in reached:
        prefix = "global " if g is own_globals else f"global {g.get('__name__')}."
        for name in sorted(_global_names(code)):
            v = g.get(name, _MISSING)
            if v is not _MISSING:
                add(prefix + name, (lambda g=g, name=name: g.get(name, _MISSING)), (g.get("__name__"), (name,)), v, 0,
                    g, name)
    for label, get in own_free:
        if label.startswith("closure "):
            v = get()
            if v is not _MISSING:
                add(label, get, None, v, 0)
    return out, changed


def free_from_names(names, own_globals):
    """The guards of reached_free from their (module name, path) descriptions, in another
    process (a kept trace's; modules not imported are left out)."""
    out = []
    for mod, path in names:
        m = sys.modules.get(mod)
        g = getattr(m, "__dict__", None)
        if type(g) is not dict:
            continue
        label = ("global " if g is own_globals else f"global {mod}.") + ".".join(path)
        out.append((label, _path_getter(g, tuple(path)), (mod, tuple(path))))
    return out

"""The guards of what a trace's code reached besides the function's own names: Note [globals
read while tracing]."""
import sys
import types

from . import _api  # CompiledFunction (_api imports this module first)
from ._guards import _MISSING, _class_attr, _free_key, _watchable
from ._reads import _global_names, _user_file, _user_module


# Note [globals read while tracing]
# A replay runs none of the function's Python, so everything the traced code read besides its
# arguments is part of the guard key (_free_key, _guards._value_part), compared on every call:
# - the globals, closure cells and default values of the function itself (_free_values; a
#   compiled bound method's object too);
# - the globals of every function of the user's that ran while tracing: helpers in the same
#   module or in others, methods of argument objects, functions reached through modules or
#   classes (_reads.Recorder, with `keep` False when the trace is not kept, lists the code
#   that starts on the tracing thread with its module's dict); each name such code reads as a
#   global, defined or not (a builtin shadowed later traces again), is guarded (reached_free);
# - past the values among those, two steps deep (`mod.cfg.scale`): the attributes that the
#   code that ran names, of the user's modules, classes (their MRO's dicts), functions,
#   compiled functions and objects of the user's classes (`cfg.SCALE`, `helper.k`,
#   `Model.eps`, `double.gain`), and the closure cells and container defaults of the user's
#   functions (a helper's `nonlocal` counter, its `memo={}`); the function's own closure
#   values are walked the same way.
# Attributes of objects (instances, argument objects and the objects in list, tuple and dict
# arguments, the object of a bound method held in a global) are read through Note [attribute
# reads] in _guards.py, class attributes read through an instance included.
# Numbers, strings, bytes and None compare by value (a float zero or NaN by its bits: -0.0 is
# not 0.0); lists, tuples (NamedTuples too), dicts and sets by contents, recursively;
# arrays by identity (they are bound by reference); everything else by identity (rebinding
# `helper = other`, an enum member, a staticmethod replaced on its class), a function with its
# code, a generator with its position, a functools.partial with its arguments.
# A value the trace itself changes (a global assigned, a list appended to, a dict entry set, an
# attribute assigned, a cell rebound by `nonlocal`, a generator advanced: compared before and
# after the trace, for what the code reached when that code started: ReadState) is a Python
# side effect that a replay would skip and the next call may read: the function then runs its
# Python on every call, as one with graph breaks does (its kernels are reused, Note [loops]),
# and the value is left out of the key (CompiledFunction._unguarded, _attr_unguarded), which
# would fail on every call. Attributes the traced code sets on the copies of functions
# (Note [captured arrays]) are set on the functions when the trace ends.
# Not seen: names read by computation (getattr(mod, name), globals()[name]), an attribute of
# another object than the code's own globals that was absent while tracing, attributes three
# steps down, the state of iterators written in C (itertools.count), code that ran on other
# threads, and while another thread's trace holds the recorder, the code reached beyond the
# function's own names.
_REACH_MAX = 512  # guards added for the code a trace reached


def _own_attr(v, a):
    """Attribute `a` of `v` as its own dict holds it (a class: the first of its MRO's), or
    _MISSING; properties, __getattr__ and slots are not run."""
    if isinstance(v, type):
        return _class_attr(v, a)
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


def _cell_of(v, name):
    """Closure cell `name` of function `v`, or None."""
    if type(v) is not types.FunctionType or not v.__closure__:
        return None
    for n, c in zip(v.__code__.co_freevars, v.__closure__):
        if n == name:
            return c
    return None


def _cell(v, name):
    """The value of closure cell `name` of function `v`, or _MISSING."""
    c = _cell_of(v, name)
    if c is None:
        return _MISSING
    try:
        return c.cell_contents
    except ValueError:
        return _MISSING


def _default(v, name):
    """Default value `name` of function `v` (positional or keyword-only), or _MISSING."""
    if type(v) is not types.FunctionType:
        return _MISSING
    kw = v.__kwdefaults__
    if kw and name in kw:
        return kw[name]
    code, defaults = v.__code__, v.__defaults__ or ()
    params = code.co_varnames[:code.co_argcount]
    i = list(params).index(name) - (len(params) - len(defaults)) if name in params else -1
    return defaults[i] if 0 <= i < len(defaults) else _MISSING


def _step(get, a):
    """A getter of what `get` gives, one step on: attribute `a` (a str), closure cell
    ("cell", name), default value ("default", name) or class (("type", None))."""
    if type(a) is tuple:
        if a[0] == "type":
            return lambda: type(get())
        f = _cell if a[0] == "cell" else _default
        return lambda: f(get(), a[1])

    def attr():
        v = get()
        return v if v is _MISSING else _own_attr(v, a)
    return attr


def _path_getter(g, path):
    get = lambda: g.get(path[0], _MISSING)  # noqa: E731
    for a in path[1:]:
        get = _step(get, a)
    return get


_NOT_SPECIAL = frozenset({"__dict__", "__weakref__", "__doc__", "__module__", "__qualname__", "__firstlineno__",
                          "__static_attributes__", "__annotations__", "__annotate__", "__slots__", "__orig_bases__",
                          "__parameters__", "__match_args__", "__dataclass_fields__", "__dataclass_params__"})


def _user_function(v):
    return type(v) is types.FunctionType and _user_file(v.__code__.co_filename)


def _children(v, attrs):
    """(step, source, value) of what guards look at past `v`: its own attributes named in
    `attrs` (present or not), the closure cells and the container default values of the
    user's functions. A source names where a change would be made (ReadState)."""
    if _attr_space(v):
        for a in attrs:
            yield a, ("attr", v, a), _own_attr(v, a)
        if isinstance(v, type):
            # Special methods Python calls without the code naming them (`obj(x)`, `a + b`).
            for k in v.__mro__:
                if k is not object and _user_module(k.__module__):
                    for a in k.__dict__:
                        if a[:2] == "__" and a[-2:] == "__" and a not in _NOT_SPECIAL:
                            yield a, ("attr", v, a), _own_attr(v, a)
        elif not isinstance(v, (types.ModuleType, types.FunctionType, _api.CompiledFunction)):
            yield ("type", None), None, type(v)  # its class's attributes (`type(self).k`)
    if _user_function(v):
        for name in v.__code__.co_freevars:
            c = _cell_of(v, name)
            yield ("cell", name), ("cell", c, None), _cell(v, name)
        code, defaults = v.__code__, v.__defaults__ or ()
        params = code.co_varnames[:code.co_argcount]
        for name, d in zip(params[len(params) - len(defaults):], defaults):
            if type(d) in (list, dict, set):
                yield ("default", name), ("default", v, name), d
        for name, d in (v.__kwdefaults__ or {}).items():
            if type(d) in (list, dict, set):
                yield ("default", name), ("default", v, name), d


def _state_of(v):
    return _free_key((("", lambda: v),))


class ReadState:
    """What the globals, attributes, closure cells and containers the user's code can reach
    held as that code first started while tracing (Note [globals read while tracing];
    _reads.Recorder calls it): a change by the trace is a side effect, found by reached_free
    at its end."""

    def __init__(self):
        self.sources = {}  # (kind, id of the holder, name) -> (holder, _state_of the value then)
        self.objs = {}  # id of a list, dict or set -> (it, _state_of it then)

    def __call__(self, code, g, frame):
        attrs = code.co_names
        for name in _global_names(code):
            self._walk(("global", g, name), g.get(name, _MISSING), attrs, 0)
        if code.co_freevars and frame is not None:
            loc = frame.f_locals
            for name in code.co_freevars:
                self._walk(None, loc.get(name, _MISSING), attrs, 0)

    def _walk(self, source, v, attrs, depth):
        if len(self.sources) + len(self.objs) >= 4 * _REACH_MAX:
            return
        if source is not None:
            k = (source[0], id(source[1]), source[2])
            if k in self.sources:
                return
            self.sources[k] = (source[1], _state_of(v))
        t = type(v)
        if t is list or t is dict or t is set:
            if id(v) not in self.objs:
                self.objs[id(v)] = (v, _state_of(v))
            return
        if depth < 2:
            for _, src, w in _children(v, attrs):
                self._walk(src, w, attrs, depth + 1)

    def changed(self, source, v):
        """Whether the value `v` now at `source` (or container `v` itself) changed since the
        code reading it started."""
        if source is not None:
            was = self.sources.get((source[0], id(source[1]), source[2]))
            if was is not None and was[0] is source[1] and was[1] != _state_of(v):
                return True
        was = self.objs.get(id(v))
        return was is not None and was[0] is v and was[1] != _state_of(v)


def reached_free(reached, own_globals, own_free, known, state=None):
    """The guards (label, getter, (module name, path) or None) of what the code in `reached`
    ((code, its module's dict) pairs: _reads.Recorder.reached) read, and of the attributes,
    closure cells and container defaults of the function's own closure values: Note [globals
    read while tracing]. `own_globals`: the compiled function's module dict (its names are
    labelled `global NAME`, others `global MODULE.NAME`); `own_free`: its (label, getter)
    pairs; `known`: labels guarded already. A guard reached through a closure cell or a
    default has no module path (None). Returns (guards, the labels among them whose values
    the trace changed: `state`, a ReadState)."""
    attrs = set()
    for code, _ in reached:
        attrs.update(code.co_names)
    attrs = sorted(attrs)
    out = []
    changed = []
    seen = set(known)  # labels guarded
    visited = set()  # labels whose attributes were looked at

    def add(label, get, desc, v, depth, source):
        if len(out) >= _REACH_MAX or label in visited:
            return
        visited.add(label)
        if label not in seen:
            seen.add(label)
            out.append((label, get, desc))
        if state is not None and state.changed(source, v) and label not in changed:
            changed.append(label)
        if depth >= 2:
            return
        for step, src, w in _children(v, attrs):
            if w is _MISSING and type(step) is str and not (state and state.changed(src, w)):
                continue  # an attribute never there (`mod.X` of other code) is not guarded
            sub = (f"{label}.{step}" if type(step) is str else f"type({label})" if step[0] == "type"
                   else f"{label}.<{step[0]} {step[1]}>")
            d = (desc[0], desc[1] + (step,)) if desc is not None and type(step) is str else None
            add(sub, _step(get, step), d, w, depth + 1, src)
    for code, g in reached:
        prefix = "global " if g is own_globals else f"global {g.get('__name__')}."
        for name in sorted(_global_names(code)):
            add(prefix + name, (lambda g=g, name=name: g.get(name, _MISSING)), (g.get("__name__"), (name,)),
                g.get(name, _MISSING), 0, ("global", g, name))
    for label, get in own_free:
        if label.startswith("closure "):
            add(label, get, None, get(), 0, None)
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

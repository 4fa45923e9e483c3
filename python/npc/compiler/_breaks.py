"""Graph breaks: the reason a break gives (what needed a concrete value, at the user's file
and line) and the breaks user code asks for (npc.compiler.graph_break, disallow_in_graph).
"""
import functools
import sys

from .. import _core
from . import _logs
from ._state import _NPC_DIR, _internal_file, _tls


# ---------------------------------------------------------------- breaks asked for
_disallowed = set()


def graph_break():
    """Inside a compiled function: ends the current graph here (no-op outside tracing)."""
    if _core._is_tracing():
        _core._current_graph_break("npc.compiler.graph_break()")


def _realize_tree(obj):
    if isinstance(obj, _core.ndarray):
        if _core._is_traced(obj):
            _core._realize(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _realize_tree(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            _realize_tree(o)


def _run_outside(fn, reason, args, kwargs):
    """A graph break: run the pending graph, make the arguments concrete, call fn untraced."""
    _core._current_graph_break(reason)
    _realize_tree(args)
    _realize_tree(kwargs)
    ctx = _tls.ctx
    patches = _tls.patches
    _core._deactivate_trace()
    _tls.ctx = None
    _tls.patches = None  # fn runs untraced: its NumPy calls are the real ones
    try:
        return fn(*args, **kwargs)
    finally:
        _tls.patches = patches
        if ctx is not None:
            _tls.ctx = ctx
            ctx.activate()


def disallow_in_graph(fn):
    """Marks `fn` so that a compiled function calling it breaks the graph there and calls it
    eagerly with concrete arrays. Returns a wrapper (use it, or decorate)."""
    name = getattr(fn, "__qualname__", repr(fn))

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _core._is_tracing():
            return _run_outside(fn, f"call to {name}, disallowed in graph", args, kwargs)
        return fn(*args, **kwargs)
    _disallowed.add(wrapper)
    return wrapper


# ---------------------------------------------------------------- breaks: reasons + user line
_REASONS = {
    "__bool__": "bool() of a traced array", "__int__": "int() of a traced array",
    "__float__": "float() of a traced array", "__complex__": "complex() of a traced array",
    "__index__": "use of a traced array as an index", "__len__": "len() of a traced array",
    "item": ".item() of a traced array", "_item": ".item() of a traced array",
    "tolist": ".tolist() of a traced array", "_repr": "printing a traced array (repr)",
    "_str": "printing a traced array (str)", "_format": "formatting a traced array",
    "__iter__": "iterating over a traced array", "_array": "conversion of a traced array to numpy",
    "_numpy_view": "conversion of a traced array to numpy",
}


def _opcode_reason(frame):
    """What the user's bytecode was doing with the value (a condition, a call)."""
    return _opcode_reason_at(frame.f_code, frame.f_lasti)


# A function with graph breaks is traced again at every call, and each break is annotated:
# disassembling the user's code at every break took two thirds of a traced call of a loop
# with a masked selection per step (45 breaks). The answer depends on the code and offset only.
@functools.lru_cache(maxsize=1024)
def _opcode_reason_at(code, lasti):
    import dis
    try:
        for ins in dis.get_instructions(code):
            if ins.offset == lasti:
                op = ins.opname
                if op.startswith("POP_JUMP") or op in ("TO_BOOL", "UNARY_NOT"):
                    return "bool() of a traced array (a condition)"
                if op.startswith("COMPARE"):
                    return "comparison of a traced value in Python"
                if op.startswith("FORMAT"):
                    return "formatting a traced array"
                if op in ("GET_ITER", "FOR_ITER"):
                    return "iterating over a traced array"
                return None
    except Exception:
        return None
    return None


def _annotate(reason):
    """Adds the user's file:line (the innermost frame outside npc and NumPy) and, when the
    break came from an npc method, what needed the value."""
    f = sys._getframe(1)
    detail = None
    fallback = False
    user = None
    outer = None  # the outermost npc/NumPy frame: the library call the user made
    while f is not None:
        fname = f.f_code.co_filename
        inside = _internal_file(fname)
        if inside:
            outer = f
            name = f.f_code.co_name
            if "fallback" in fname or "fallback" in name or name in ("__array_function__", "__array_ufunc__"):
                # The protocols only need concrete values when they hand the call to NumPy.
                fallback = True
            elif name in _REASONS:
                detail = _REASONS[name]  # the outermost npc frame (closest to the user) wins
        else:
            if fname != "<frozen runpy>":
                user = f
                break
        f = f.f_back
    if fallback:
        detail = "NumPy fallback call"
    if detail is None and outer is not None and outer.f_code.co_filename.startswith(_NPC_DIR) is False:
        mod = outer.f_globals.get("__name__", "numpy")
        detail = f"NumPy fallback call ({mod}.{outer.f_code.co_name})"
    elif detail is None and outer is not None and reason == "a concrete value was needed":
        mod = outer.f_globals.get("__name__", "npc")
        detail = f"{mod}.{outer.f_code.co_name} needs a concrete value"
    if detail is None and user is not None:
        detail = _opcode_reason(user)
    if detail and reason == "a concrete value was needed":
        reason = detail
    where = f" at {user.f_code.co_filename}:{user.f_lineno} in {user.f_code.co_name}" if user else ""
    text = reason + where
    _tls.last_break = text
    _logs.log("graph_breaks", "graph break: %s", text)
    return text

"""npc.explain: trace a function once and report its graphs, breaks, ops and guards."""
from ._api import CompiledFunction
from ._state import _all_compiled, _stats


class ExplainOutput:
    """What npc.explain found: graphs, breaks (with the user's line), ops, guards."""

    def __init__(self, f):
        keep = [i for i, g in enumerate(f.last_graphs) if g.strip() != "return"]
        f_graphs = [f.last_graphs[i] for i in keep]
        self.graph_count = len(f_graphs)
        self.graph_break_count = len(f.last_breaks)
        self.break_reasons = list(f.last_breaks)
        self.ops_per_graph = [f.last_ops_per_graph[i] for i in keep]
        self.op_count = sum(self.ops_per_graph)
        self.guards = [f"{p}: {t}" for p, t in (f._last_labels or [])]
        self.graphs = f_graphs
        self.side_effects = list(f.last_side_effects)
        # Note [loops] in src/tracer/trace_segments.cpp: segments cut at the node budget, and how many
        # segments (cut or broken) were found by structure instead of built.
        self.segment_cuts = f.last_cuts
        self.segments_reused = f.last_segments_reused
        # Note [runtime ints] in _guards.py: the int arguments traced as runtime scalars.
        self.runtime_ints = list(f.last_runtime_ints)

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        lines += [f"  {i + 1}. {r}" for i, r in enumerate(self.break_reasons)] or ["  (none)"]
        lines.append("Ops per Graph: " + ", ".join(map(str, self.ops_per_graph)))
        if self.segment_cuts or self.segments_reused:
            lines.append(f"Segments: {self.graph_count} ({self.segment_cuts} cuts at the node budget, "
                         f"{self.segments_reused} reused by structure)")
        if self.side_effects:
            lines.append("Python side effects (not replayed):")
            lines += [f"  {x}" for x in self.side_effects]
        if self.runtime_ints:
            lines.append("Runtime ints: " + ", ".join(self.runtime_ints))
        lines.append("Guards:")
        lines += [f"  {g}" for g in self.guards]
        for i, g in enumerate(self.graphs):
            lines.append(f"Graph {i}:")
            lines += ["  " + x for x in g.rstrip().splitlines()]
        return "\n".join(lines)

    __repr__ = __str__


def explain(fn):
    """``npc.explain(fn)(*args)``: traces fn once (backend "eager") and returns an
    ExplainOutput with graph_count, graph_break_count, op_count, break_reasons, ops_per_graph,
    guards, side_effects (the Python side effects it detected, which run while tracing only),
    runtime_ints (the int arguments traced as runtime scalars: with a compiled `fn`, those its
    calls so far made runtime, Note [runtime ints] in _guards.py) and the graphs' text."""
    inner = fn._fn if isinstance(fn, CompiledFunction) else fn

    def run_explain(*args, **kwargs):
        f = CompiledFunction(inner, backend="eager",
                             dynamic=fn._dynamic if isinstance(fn, CompiledFunction) else None)
        _all_compiled.remove(f)
        f._trace_cache = False  # a kept trace has no graphs, breaks or guards to show
        if isinstance(fn, CompiledFunction):
            f._dyn_ints, f._static_ints = set(fn._dyn_ints), set(fn._static_ints)
            f._int_bounds = dict(fn._int_bounds)
        saved = dict(_stats)
        try:
            f(*args, **kwargs)
        finally:
            _stats.update(saved)
        return ExplainOutput(f)
    return run_explain

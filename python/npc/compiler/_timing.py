"""The compiled-or-eager choice of a function's calls (Note [slow graph breaks]): the timed
calls of one guard key and the mode chosen from them."""

# Note [slow graph breaks]
# A function with graph breaks runs its Python on every call: each call traces again, looks
# each segment up and runs it. When the segments are small (a boolean mask per loop
# iteration, a scalar read per step) that costs more than the operations themselves, and the
# compiled function would be slower than the same code run eagerly. Whole graphs (functions
# without breaks) can lose too (_timed_replay): a traced Python loop of thousands of tiny
# kernel launches can cost more than the eager operations it stands for. So, per guard key,
# the calls after the compiling one alternate, timed: a traced call (a replay), an eager
# call, a traced call, ... (alternating, so that a change of the machine's load shows in both
# modes alike), and _Timing.decide() picks the mode of later calls from the typical call of
# each mode (below):
# - calls of under _SLOW_BREAK_MIN_S traced stay traced (no gain to measure);
# - a first eager call over _FAR_SLOWER times the traced one ends the probes: traced (an
#   eager run of a loop the compiled code runs 10x faster is not repeated to be sure);
# - after two calls of each mode, a gap of more than _CLEAR_GAP either way decides;
# - otherwise probes go on until each mode has _probes_wanted() calls (more for short calls,
#   whose times vary more: _PROBE_BUDGET_S of traced calls, between 2 and _PROBES_MAX), and
#   eager wins when its typical call took under _SLOW_BREAK_RATIO of the typical traced
#   one: the faster mode, with a small margin that keeps compiled code when the two are
#   within noise of each other.
# A mode's typical call is its lower median (_typical: the faster of two calls, the middle of
# three). Not the minimum: some calls vary by themselves, not by noise (NumPy's matmul on
# BLAS threads took 0.62-6.9 ms for one 0.8 ms product, compiled calls 0.64-0.81 ms), and the
# fastest of six such calls says little about the calls to come; the median does, and one
# call slowed by other load cannot move it.
# Later calls with that key run the chosen mode (eager ones counted in eager_runs, the choice
# logged under `fallback`). Results are the same either way: eager npc is NumPy's semantics,
# which compiled code reproduces.
# "Eager" is two modes when the call passes NumPy arrays (Note [eager npc calls]): the
# function as it is (NumPy's own loops) and the function on npc views of those arrays (npc's
# eager loops); both are probed, in turn with traced calls, and the faster of them is what
# the traced calls are compared with. NumPy is the faster one for some functions (scalar
# code, tiny arrays) and npc for others (a fused kernel slower than npc's vector routines, a
# linear solve per loop step behind a graph break): a compiled function should not run
# slower than either. `config.eager_if_faster = False` (or NPC_EAGER_IF_FASTER=0,
# which the test suite sets so that counts of traces do not depend on the machine's speed)
# keeps every call traced; npc.compiler.reset() forgets the measurements. Eager decisions are
# kept in the disk cache for later processes: Note [modes kept across processes] in _persist.py.

_SLOW_BREAK_MIN_S = 1e-5
_SLOW_BREAK_RATIO = 0.97
_FAR_SLOWER = 3.0
_CLEAR_GAP = 1.5
_PROBE_BUDGET_S = 5e-3
_PROBES_MAX = 6


class _Timing:
    """The timed calls of one guard key and the mode chosen from them (Note [slow graph breaks]):
    "traced", or one of the eager modes `alts` ("eager": the function as it is; "npc": on npc
    views of its NumPy arguments, Note [eager npc calls])."""
    __slots__ = ("times", "alts", "mode")

    def __init__(self, alts=("eager",)):
        self.alts = tuple(alts)
        self.times = {m: [] for m in ("traced",) + self.alts}
        self.mode = None  # "traced" or one of alts once decided

    @property
    def traced(self):
        return self.times["traced"]

    @property
    def eager(self):
        """The calls of the fastest eager mode so far."""
        return self.times[self._best()]

    def _best(self):
        timed = [m for m in self.alts if self.times[m]]
        return min(timed, key=lambda m: _typical(self.times[m])) if timed else self.alts[0]

    def next(self):
        """The mode of the next timed call: traced first, then each mode in turn."""
        return min(self.times, key=lambda m: len(self.times[m]))

    def add(self, mode, seconds):
        self.times[mode].append(seconds)
        self.mode = self.decide()
        return self.mode

    def decide(self):
        tr = self.traced
        if not tr:
            return None
        ct = _typical(tr)
        if ct < _SLOW_BREAK_MIN_S and len(tr) >= 2:
            return "traced"
        if any(not self.times[m] for m in self.alts):
            return None
        best = self._best()
        ce = _typical(self.times[best])
        if all(len(self.times[m]) == 1 for m in self.alts) and ce > _FAR_SLOWER * ct:
            return "traced"
        n = min(len(v) for v in self.times.values())
        if n >= 2 and (ce * _CLEAR_GAP < ct or ce > _CLEAR_GAP * ct):
            return best if ce < ct else "traced"
        if n >= _probes_wanted(ct):
            return best if ce < _SLOW_BREAK_RATIO * ct else "traced"
        return None


def _typical(seconds):
    """The lower median of a mode's call times (Note [slow graph breaks])."""
    return sorted(seconds)[(len(seconds) - 1) // 2]


def _probes_wanted(seconds):
    """Timed calls of each mode before a close call is decided: more for short calls."""
    return max(2, min(_PROBES_MAX, int(_PROBE_BUDGET_S / max(seconds, 1e-9))))

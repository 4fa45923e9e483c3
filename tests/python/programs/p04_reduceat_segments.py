"""Per-session statistics of an event stream with ufunc.reduceat."""
import numpy as np

rng = np.random.default_rng(7)
durations = rng.integers(1, 50, size=40).astype(np.float64)
session_id = np.sort(rng.integers(0, 6, size=40))
starts = np.flatnonzero(np.r_[True, session_id[1:] != session_id[:-1]])
print("starts:", starts)
sums = np.add.reduceat(durations, starts)
maxes = np.maximum.reduceat(durations, starts)
counts = np.diff(np.r_[starts, durations.size])
means = sums / counts
print(sums, maxes, counts)
print(np.round(means, 4))
running = np.add.accumulate(durations)
print(running[starts[1:] - 1])
idx = np.searchsorted(running, [100.0, 500.0, 900.0])
print("threshold crossings:", idx)
mult = np.multiply.reduceat(np.arange(1, 11), [0, 3, 7])
print(mult, mult.dtype)
m2 = np.minimum.reduceat(durations.reshape(8, 5), [0, 2, 4], axis=1)
print(m2)
RESULT = {"sums": sums, "maxes": maxes, "means": means, "mult": mult, "m2": m2}

"""Rolling-window features of a price series with stride tricks."""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view, as_strided

prices = np.array([10.0, 10.5, 10.2, 11.0, 11.8, 11.5, 12.1, 12.0, 12.6, 13.0, 12.4, 12.9])
win = sliding_window_view(prices, 4)
print(win.shape, win.strides == (8, 8), win.flags.writeable)
rolling_mean = win.mean(axis=-1)
rolling_std = win.std(axis=-1, ddof=1)
print(np.round(rolling_mean, 4))
print(np.round(rolling_std, 4))
pairs = as_strided(prices, shape=(prices.size - 1, 2), strides=(prices.strides[0], prices.strides[0]))
print(pairs[:3])
ret = pairs[:, 1] / pairs[:, 0] - 1
print(np.round(ret, 5))
grid = np.lib.stride_tricks.sliding_window_view(np.arange(16).reshape(4, 4), (2, 2))
print(grid.shape, grid.sum(axis=(-1, -2)))
b = np.broadcast_to(prices[:3], (2, 3))
print(b, b.strides)
zscore = (prices[3:] - rolling_mean) / rolling_std
print(np.round(zscore, 4))
RESULT = {"mean": rolling_mean, "std": rolling_std, "ret": ret, "grid": grid.sum(axis=(-1, -2)),
          "z": zscore}

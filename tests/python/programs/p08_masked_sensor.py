"""Sensor readings with dropouts handled as masked arrays."""
import numpy as np

readings = np.array([[21.5, 22.0, -999.0, 23.1],
                     [20.9, np.nan, 21.7, 22.4],
                     [-999.0, 21.2, 21.9, 22.8]])
m = np.ma.masked_values(readings, -999.0)
m = np.ma.masked_invalid(m)
print(m)
print(m.mean(axis=0))
print(m.mean(axis=1).filled(0.0))
print(m.count(axis=0), m.mask.sum())
anom = m - m.mean()
print(np.ma.round(anom, 3))
clipped = np.ma.clip(m, 21.0, 22.5)
print(clipped.filled(-1))
hot = np.ma.masked_where(m < 22.0, m)
print(hot.compressed())
stacked = np.ma.vstack([m[0], m[2]])
print(stacked.max(axis=0))
RESULT = {"readings": readings, "mean0": m.mean(axis=0).filled(np.nan), "filled": m.filled(0.0), "hot": hot.compressed(),
          "clip": clipped.filled(-1)}

"""Warehouse inventory reconciliation with set operations."""
import numpy as np

system = np.array([101, 102, 103, 105, 108, 110, 113, 121])
scanned = np.array([102, 103, 104, 105, 110, 121, 121, 130])
print(np.intersect1d(system, scanned))
print(np.setdiff1d(system, scanned), np.setdiff1d(scanned, system))
print(np.union1d(system, scanned).size, np.setxor1d(system, scanned))
found = np.isin(system, scanned)
print(found, found.mean())
common, ia, ib = np.intersect1d(system, scanned, return_indices=True)
print(ia, ib)
dup_vals, dup_counts = np.unique(scanned, return_counts=True)
print(dup_vals[dup_counts > 1])
stock = np.array([5, 0, 12, 3, 7, 1, 0, 9])
restock = np.where(found & (stock < 4), 10 - stock, 0)
print(restock, restock.sum())
print(np.unique(np.concatenate([system % 10, scanned % 10])))
RESULT = {"found": found, "restock": restock, "ia": ia, "ib": ib}

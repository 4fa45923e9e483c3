"""Leaderboard: ranking with ties, lexsort, partitions."""
import numpy as np

points = np.array([88, 92, 75, 92, 60, 88, 99, 75, 81])
minutes = np.array([30, 25, 40, 28, 50, 29, 35, 38, 33])
names = np.array(["ann", "ben", "cai", "dee", "eli", "fay", "gus", "hal", "ivy"])
order = np.lexsort((minutes, -points))
print(names[order])
rank = np.empty_like(order)
rank[order] = np.arange(1, len(order) + 1)
print(rank)
dense = np.unique(-points, return_inverse=True)[1] + 1
print(dense)
top3 = np.partition(points, -3)[-3:]
print(np.sort(top3), np.argpartition(points, 2)[:2].size)
s = np.sort(points, kind="stable")[::-1]
print(s, np.searchsorted(np.sort(points), 88, side="right"))
vals, idx, counts = np.unique(points, return_index=True, return_counts=True)
print(vals, idx, counts)
m = np.argsort(minutes, kind="stable")
print(m, minutes[m].cumsum())
med = np.median(points)
print(med, (points > med).sum())
RESULT = {"order": order, "rank": rank, "dense": dense, "counts": counts}

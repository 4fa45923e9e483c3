"""Sales ledger in a structured array: sort by field, group totals per region."""
import numpy as np

ledger = np.array(
    [("north", 3, 12.5, 2), ("south", 1, 99.0, 1), ("north", 7, 3.25, 10), ("east", 2, 15.0, 4),
     ("south", 5, 7.5, 3), ("east", 9, 1.0, 12), ("north", 4, 20.0, 1)],
    dtype=[("region", "U8"), ("item", "i4"), ("price", "f8"), ("qty", "i2")])
revenue = ledger["price"] * ledger["qty"]
order = np.argsort(ledger, order=("region", "item"))
print(ledger[order])
regions, inverse = np.unique(ledger["region"], return_inverse=True)
totals = np.bincount(inverse, weights=revenue)
for r, t in zip(regions, totals):
    print(f"{r:>6s}: {t:8.2f}")
best = ledger[np.argmax(revenue)]
print("best line:", best, best["region"])
ledger["price"][ledger["qty"] > 5] *= 0.9
print(ledger["price"].round(3))
print(np.sort(ledger, order="price")[:3])
RESULT = {"revenue": revenue, "totals": totals, "price": ledger["price"].copy(), "regions": regions}

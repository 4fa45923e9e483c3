"""Tiered shipping prices with np.vectorize, np.frompyfunc and np.piecewise."""
import numpy as np


def tier(weight, express):
    base = 5.0 if weight < 1 else 8.0 if weight < 5 else 15.0
    return base * (1.5 if express else 1.0)


weights = np.array([0.2, 1.0, 3.7, 5.0, 12.5, 0.9])
express = np.array([False, True, False, True, True, False])
price = np.vectorize(tier, otypes=[np.float64])(weights, express)
print(price, price.dtype)
vec = np.vectorize(lambda w: w * 2 if w > 1 else -w)
print(vec(weights))
labels = np.frompyfunc(lambda w: "heavy" if w >= 5 else "light", 1, 1)(weights)
print(labels, labels.dtype)
pw = np.piecewise(weights, [weights < 1, (weights >= 1) & (weights < 5), weights >= 5],
                  [lambda w: 5 + 0 * w, lambda w: 6 + w, lambda w: 10 + 0.5 * w])
print(pw)
sel = np.select([weights < 1, weights < 5], [weights * 10, weights * 2], default=-1.0)
print(sel)
outer_fee = np.vectorize(lambda a, b: a + 2 * b)(weights[:, None], np.arange(3))
print(outer_fee.shape, outer_fee.sum())
RESULT = {"price": price, "pw": pw, "sel": sel, "outer": outer_fee, "labels": labels}

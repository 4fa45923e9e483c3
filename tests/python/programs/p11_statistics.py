"""Descriptive statistics of exam scores."""
import numpy as np

rng = np.random.default_rng(11)
scores = rng.normal(70, 12, size=(5, 30)).round(1)
scores[2, 4] = np.nan
print(np.nanmean(scores, axis=1).round(4))
print(np.nanstd(scores, axis=1, ddof=1).round(4))
print(np.nanmedian(scores, axis=1))
print(np.nanpercentile(scores, [10, 50, 90], axis=1).round(3))
clean = np.nan_to_num(scores, nan=70.0)
print(np.quantile(clean, 0.75, method="linear").round(4))
print(np.corrcoef(clean[:3]).round(5))
print(np.cov(clean[:2], ddof=0).round(4))
w = np.arange(1, 31)
print(np.average(clean, axis=1, weights=w).round(5))
grades = np.digitize(clean, [60, 70, 80, 90])
print(np.bincount(grades.ravel(), minlength=5))
z = (clean - clean.mean(axis=1, keepdims=True)) / clean.std(axis=1, keepdims=True)
print(np.abs(z).max().round(6), z.dtype)
top = np.argsort(clean.mean(axis=0))[::-1][:5]
print(top)
RESULT = {"z": z, "grades": grades, "cov": np.cov(clean[:2], ddof=0), "top": top}

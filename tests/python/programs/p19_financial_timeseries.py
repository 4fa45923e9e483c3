"""Portfolio returns, drawdowns and NaN-aware aggregates."""
import numpy as np

rng = np.random.default_rng(9)
rets = rng.normal(0.0005, 0.01, size=(250, 3))
rets[17, 1] = np.nan
weights = np.array([0.5, 0.3, 0.2])
port = np.nansum(rets * weights, axis=1)
wealth = np.cumprod(1 + port)
peak = np.maximum.accumulate(wealth)
drawdown = wealth / peak - 1
print(f"final wealth {wealth[-1]:.6f}, max drawdown {drawdown.min():.6f}")
print(np.argmin(drawdown), np.round(np.nanmean(rets, axis=0) * 250, 6))
print(np.round(np.nanstd(rets, axis=0, ddof=1) * np.sqrt(250), 6))
logr = np.log1p(port)
print(np.round(logr.sum(), 8), np.round(np.expm1(logr.sum()), 8))
monthly = port[:240].reshape(12, 20).sum(axis=1)
print(np.round(monthly, 6))
signal = np.where(monthly > 0, "up", "down")
print(signal)
vol = np.sqrt(np.convolve(port ** 2, np.ones(20) / 20, mode="valid"))
print(vol.shape, np.round(vol.max(), 8))
print(np.isnan(rets).any(axis=0), np.nanmax(rets, axis=0).round(6))
RESULT = {"wealth": wealth, "drawdown": drawdown, "monthly": monthly, "vol": vol}

"""Binning taxi pickups into a 2-D grid and zones."""
import numpy as np

rng = np.random.default_rng(8)
lon = rng.uniform(-74.05, -73.90, 500)
lat = rng.uniform(40.65, 40.85, 500)
fare = rng.gamma(2.0, 7.5, 500).round(2)
H, xe, ye = np.histogram2d(lon, lat, bins=(5, 4))
print(H.astype(int))
print(np.round(xe, 4), np.round(ye, 4))
zone = np.digitize(lon, xe[1:-1]) * 4 + np.digitize(lat, ye[1:-1])
totals = np.bincount(zone, weights=fare, minlength=20)
print(np.round(totals.reshape(5, 4), 2))
busiest = np.unravel_index(np.argmax(H), H.shape)
print(busiest)
cdf = np.cumsum(np.histogram(fare, bins=10)[0]) / fare.size
print(np.round(cdf, 3))
hi = np.histogram_bin_edges(fare, bins="auto")
print(hi.size, np.round(hi[:3], 4))
RESULT = {"H": H, "totals": totals, "cdf": cdf, "zone": zone}
